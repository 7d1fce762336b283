"""Write a synthetic estate into a landing folder, day by day and slot by slot, streaming.

Layout (the same as ``samples/landing``)::

    <out>/<YYYY-MM-DD>/<QMNAME>/config_<HHMMSS>.mqsc|.json, chstatus_<HHMMSS>.mqsc, puts.csv,
                                xmitq_<HHMMSS>.amqsbcg|.dmpmqmsg, accounting.amqsmon
    (with puts_format "activity-trace": <QMNAME>.<YYYY-MM-DD>.amqsact, amqsact -v output, instead of puts.csv)
    (with channel_trace: <QMNAME>.<YYYY-MM-DD>.channels.amqsact, the channel agents' trace; trace_format "json":
     .amqsevt.jsonl instead of .amqsact for every trace)
    (with qsg: the members of the queue-sharing group, z/OS queue managers, have config_<HHMMSS>.txt and
     chstatus_<HHMMSS>.txt, CSQUTIL COMMAND output, and no accounting.amqsmon)
    <out>/_generate.json        the ground truth

Memory is bounded: puts are written as they are generated; accounting is kept as counters per interval;
messages held on transmission queues are kept as counters plus (for the browses) at most ``browse_cap`` of
them in full.
"""

from __future__ import annotations

import json
import random
import sys
import time
from datetime import date, datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import TextIO

import clwl.generate.planned as P
import clwl.generate.render_puts as RP
from clwl.generate.accounting import AccountingWriter, DayAccounting, interval_of
from clwl.generate.build import build_estate
from clwl.generate.captures import BROKEN_KINDS, CaptureWriter
from clwl.generate.channel_trace import TRACE_ENDS, TRACE_FORMATS, ChannelStop, ChannelTraces
from clwl.generate.channel_trace import file_name as trace_file_name
from clwl.generate.consumers import DepthLedger
from clwl.generate.estate import (
    FR_NAMES,
    SLOT_MIN,
    TRAFFIC_END_MIN,
    TRAFFIC_START_MIN,
    Change,
    ConfigState,
    Estate,
    at_min,
)
from clwl.generate.held import BrowseWriter
from clwl.generate.simulate import DayOutput, SenderDay, Shares
from clwl.generate.truth import TruthWriter

PUTS_FORMATS = ("csv", "activity-trace")
DEFAULT_TRACE_DISAGREEMENTS = 3
DEFAULT_CHANNEL_STOPS = 2
TRACE_LEVELS = {"svc": 2, "batch": 3, "recon": 2}  # mqat.ini TRACE= per application: HIGH traces the MQMD
# (GroupId, AccountingToken) of the batch application's groups and bound handles

def largest_remainder(total: int, weights: list[float]) -> list[int]:
    """Split ``total`` into integers proportional to ``weights`` (ties to the lower index)."""
    s = sum(weights)
    if total <= 0 or s <= 0:
        return [0] * len(weights)
    exact = [total * w / s for w in weights]
    out = [int(x) for x in exact]
    rest = total - sum(out)
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - out[i]), i))
    for i in order[:rest]:
        out[i] += 1
    return out


def slot_profile(rng: random.Random, n_slots: int) -> list[float]:
    """Relative traffic per 30-minute slot from 06:00: a morning and an afternoon peak, some noise."""
    import math
    w = []
    for s in range(n_slots):
        h = TRAFFIC_START_MIN / 60 + (s + 0.5) * SLOT_MIN / 60
        base = 1 + 2 * math.exp(-((h - 11) / 3) ** 2) + 1.5 * math.exp(-((h - 15.5) / 2.5) ** 2)
        w.append(base * (0.85 + 0.3 * rng.random()))
    return w


class Progress:
    def __init__(self, quiet: bool, stream: TextIO = sys.stderr):
        self.quiet, self.stream = quiet, stream
        self.t0 = time.perf_counter()
        self.total = 0
        self.last_print = 0

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"clwl generate: {text}", file=self.stream, flush=True)

    def messages(self, n: int) -> None:
        self.total += n
        if self.total - self.last_print >= 1_000_000:
            self.last_print = self.total
            el = time.perf_counter() - self.t0
            self.say(f"{self.total:,} puts so far, {el:.1f} s, {self.total / max(el, 1e-9) / 1000:.0f}k msg/s")


class Generator(CaptureWriter, BrowseWriter, AccountingWriter, TruthWriter):
    """Writes the estate: plans, then day by day the slots, captures, puts, browses and accounting, then the
    ground truth (the parts in ``captures``, ``held``, ``accounting``, ``truth``)."""

    def __init__(self, opts, progress: Progress | None = None):
        self.o = opts
        self.out = Path(opts.out)
        self.est: Estate = build_estate(opts)
        self.cfg = ConfigState(self.est)
        self.progress = progress or Progress(True)
        self.shares = Shares(opts.bind_open_share, opts.bind_group_share, opts.named_qmgr_share)
        self.sd: dict[str, SenderDay] = {}
        self.day: date | None = None
        self.files: list[str] = []
        self.truth_days: list[dict] = []
        self.held_truth: list[dict] = []
        self.undelivered: dict[tuple[str, str], int] = {}
        self.skews: list[dict] = []
        self.broken: list[dict] = []
        self.accounting_truth: dict[str, dict[str, dict[str, int]]] = {}
        self.browses: list[dict] = []
        self.reallocated: list[dict] = []
        self.partition_waits: list[dict] = []
        self.rest = set(self.est.rest_qmgrs)
        if opts.puts_format not in PUTS_FORMATS:
            raise ValueError(f"puts_format {opts.puts_format!r}: one of {', '.join(PUTS_FORMATS)}")
        self.trace = opts.puts_format == "activity-trace"
        n = opts.trace_disagreements
        default = DEFAULT_TRACE_DISAGREEMENTS if self.trace and not getattr(opts, "trace_gets", False) else 0
        self.n_disagreements = default if n is None else n
        if self.n_disagreements and not self.trace:
            raise ValueError("trace disagreements need puts_format activity-trace")
        self.trace_disagreements: list[dict] = []
        self.trace_format = getattr(opts, "trace_format", "amqsact")
        if self.trace_format not in TRACE_FORMATS:
            raise ValueError(f"trace_format {self.trace_format!r}: one of {', '.join(TRACE_FORMATS)}")
        self.channel_trace = bool(getattr(opts, "channel_trace", False))
        self.trace_ends = getattr(opts, "channel_trace_ends", "sending")
        if self.trace_ends not in TRACE_ENDS:
            raise ValueError(f"channel_trace_ends {self.trace_ends!r}: one of {', '.join(TRACE_ENDS)}")
        n = getattr(opts, "channel_stops", None)
        self.n_stops = (DEFAULT_CHANNEL_STOPS if self.channel_trace else 0) if n is None else n
        if self.n_stops and not self.channel_trace:
            raise ValueError("channel stops need the channel agents' trace")
        self.channel_stops: list[dict] = []
        self.channel_trace_files: list[str] = []
        self.channel_trace_counts = [0, 0]  # departures, arrivals
        self.zos = {q.name for q in self.est.qmgrs.values() if q.zos}  # --qsg: the group's members
        if self.est.qsg is not None and (self.trace or self.channel_trace):
            raise ValueError("a queue-sharing group (qsg) is written with puts_format csv and no channel trace: "
                             "z/OS queue managers have no amqsact application activity trace")
        self.trace_gets = bool(getattr(opts, "trace_gets", False))
        if self.trace_gets and not (self.trace and self.channel_trace and self.trace_ends == "both"):
            raise ValueError("trace_gets needs puts_format activity-trace and channel_trace with channel_trace_ends "
                             "both: every arrival traced")
        if self.trace_gets and (self.n_disagreements or getattr(opts, "partitions", 0)):
            raise ValueError("trace_gets needs no trace disagreements and no partitions: the depth truth follows "
                             "each message from the put MQ traced")
        self.depth_truth: dict[str, dict] = {}
        self.depth_start: dict[tuple[str, str], int] = {}
        self.consumer_truth = {"files": [], "gets": 0, "backouts": 0, "pauses": [], "statistics": []}
        self.path_truth: list[dict] = []
        self._plan()

    # -- plans (broken records, skews, traffic volumes) ----------------------------------------------
    def _plan(self) -> None:
        o, est = self.o, self.est
        rng = random.Random(f"clwl-generate/{o.seed}/plan")
        self.volume: dict[tuple[str, date], list[int]] = {}
        for day in est.days:
            per_sender = largest_remainder(o.messages_per_day, [est.sender_share[s] for s in est.senders])
            n_slots = (TRAFFIC_END_MIN - TRAFFIC_START_MIN) // SLOT_MIN
            for s, total in zip(est.senders, per_sender):
                prng = random.Random(f"clwl-generate/{o.seed}/profile/{s}/{day.isoformat()}")
                self.volume[(s, day)] = largest_remainder(total, slot_profile(prng, n_slots))
        self.broken_plan: list[dict] = []
        self.bad_rows: dict[tuple[str, date], dict[int, list[str]]] = {}
        fr_targets = [b for b in est.backends]
        used_unbalanced: set = set()
        for i in range(o.broken_records):
            kind = BROKEN_KINDS[i % len(BROKEN_KINDS)]
            day = est.days[rng.randrange(len(est.days))]
            if kind in ("bad_hex", "short_token"):
                s = est.senders[rng.randrange(len(est.senders))]
                n = sum(self.volume[(s, day)])
                if n == 0:
                    continue
                idx = rng.randrange(n)
                self.bad_rows.setdefault((s, day), {}).setdefault(idx, []).append(kind)
                self.broken_plan.append({"kind": kind, "day": day, "qmgr": s, "row_index": idx})
            elif kind == "truncated":
                s = est.senders[rng.randrange(len(est.senders))]
                k = sum(1 for b in self.broken_plan if b["kind"] == kind and b["day"] == day and b["qmgr"] == s)
                self.broken_plan.append({"kind": kind, "day": day, "qmgr": s, "minute": 23 * 60 + 5 * k})
            elif kind == "unbalanced":
                for _ in range(20):
                    fr = FR_NAMES[rng.randrange(2)]
                    y = fr_targets[rng.randrange(len(fr_targets))]
                    if (day, fr, y) not in used_unbalanced:
                        used_unbalanced.add((day, fr, y))
                        self.broken_plan.append({"kind": kind, "day": day, "qmgr": fr, "record_of": y})
                        break
            else:  # not_mqsc: a capture of a back end that failed
                b = est.backends[rng.randrange(len(est.backends))]
                k = sum(1 for x in self.broken_plan if x["kind"] == kind and x["day"] == day)
                self.broken_plan.append({"kind": kind, "day": day, "qmgr": b,
                                         "minute": 9 * 60 + 15 + (k % 14) + 60 * (k // 14)})
        self.skew_plan: list[dict] = []
        for i in range(o.skew):
            factor = Fraction(str(o.skew_factor)) if o.skew_factor else (Fraction(1, 2) if i % 2 == 0
                                                                          else Fraction(8, 5))
            self.skew_plan.append({"day": est.days[rng.randrange(len(est.days))], "factor": factor, "n": i})
        # traced puts whose Resolved_Q_mgr is made wrong: (sender, day) -> row indexes (a stream of their own, so
        # the plans above are those of a puts.csv estate)
        self.trace_inject: dict[tuple[str, date], set[int]] = {}
        trng = random.Random(f"clwl-generate/{o.seed}/trace-disagreements")
        cells = [(s, day) for day in est.days for s in est.senders if sum(self.volume[(s, day)])]
        total = sum(sum(self.volume[c]) for c in cells)
        for _ in range(min(self.n_disagreements, total)):
            while True:
                s, day = cells[trng.randrange(len(cells))]
                idx = trng.randrange(sum(self.volume[(s, day)]))
                chosen = self.trace_inject.setdefault((s, day), set())
                if idx not in chosen:
                    chosen.add(idx)
                    break

        self._plan_stops()

    def _plan_stops(self) -> None:
        """Injected channel stops: (sender, day) -> [(slot index, minutes into the slot, minutes stopped)], each
        inside one slot whose start and end are both status captures of the sender (a stream of its own)."""
        o, est = self.o, self.est
        self.stop_plan: dict[tuple[str, date], list[tuple[int, int, int]]] = {}
        if not self.n_stops:
            return
        rng = random.Random(f"clwl-generate/{o.seed}/channel-stops")
        slots = list(range(TRAFFIC_START_MIN, TRAFFIC_END_MIN, SLOT_MIN))
        cells = [(s, day) for day in est.days for s in est.senders]
        taken: set = set()
        for _ in range(self.n_stops):
            for _try in range(100):
                s, day = cells[rng.randrange(len(cells))]
                caps = [m for m, qms in est.captures[day].items() if s in qms]
                # a slot after the sender's first capture and before its last, not its first two slots
                choices = [i for i, m in enumerate(slots) if i >= 2 and min(caps) <= m and m + SLOT_MIN <= max(caps)]
                i = choices[rng.randrange(len(choices))] if choices else None
                if i is not None and (s, day, i) not in taken:
                    taken.add((s, day, i))
                    offset, length = rng.randint(3, 10), rng.randint(2, 12)
                    self.stop_plan.setdefault((s, day), []).append((i, offset, length))
                    break

    # -- files ---------------------------------------------------------------------------------------
    def path(self, day: date, qm: str, name: str) -> Path:
        p = self.out / day.isoformat() / qm / name
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def write(self, day: date, qm: str, name: str, text: str) -> Path:
        p = self.path(day, qm, name)
        p.write_bytes(text.encode("utf-8"))
        self.files.append(str(p.relative_to(self.out)))
        return p

    def _rel(self, day: date, qm: str, name: str) -> str:
        return f"{day.isoformat()}/{qm}/{name}"

    # -- the run ----------------------------------------------------------------------------------
    def run(self) -> dict:
        est = self.est
        self.out.mkdir(parents=True, exist_ok=True)
        t_start = time.perf_counter()
        changes_by_day: dict[date, dict[int, list[Change]]] = {}
        for c in est.changes:
            changes_by_day.setdefault(c.at.date(), {}).setdefault(c.at.hour * 60 + c.at.minute, []).append(c)
        for planned in P.truth(est, est.events):  # the subjects chosen from the seed, said
            self.progress.say(P.describe(planned))
        total = 0
        for di, day in enumerate(est.days):
            t_day = time.perf_counter()
            n_day = self.run_day(di, day, changes_by_day.get(day, {}))
            total += n_day
            el = time.perf_counter() - t_day
            self.progress.say(f"{day.isoformat()}: {n_day:,} puts from {len(est.senders)} sending queue managers "
                              f"in {el:.2f} s ({n_day / max(el, 1e-9) / 1000:.0f}k msg/s)")
        truth = self.ground_truth(total)
        (self.out / "_generate.json").write_bytes((json.dumps(truth, indent=2) + "\n").encode())
        el = time.perf_counter() - t_start
        self.progress.say(f"wrote {len(self.files)} files, {total:,} puts, to {self.out} in {el:.1f} s")
        return truth

    def run_day(self, di: int, day: date, changes: dict[int, list[Change]]) -> int:
        est, o = self.est, self.o
        self.day = day
        self.sd = {}
        outs = {}
        writers: dict[str, RP.AmqsactPutsWriter] = {}
        channels = None
        if self.channel_trace:
            channels = ChannelTraces(est, day, self.trace_format, self._open_trace_file,
                                     arrivals=self.trace_ends == "both")
        ledger = None
        if self.trace_gets:
            ledger = DepthLedger(est, day, self.trace_format, o.seed, self._open_consumer_file, self.depth_start)
            channels.ledger = ledger  # type: ignore[union-attr]
        for s in est.senders:
            p = self.path(day, s, self.puts_name(s, day))
            outs[s] = open(p, "w", encoding="utf-8", newline="")
            self.files.append(str(p.relative_to(self.out)))
            if self.trace:  # the same rows, printed as the trace; MQ resolves every traced put (observed_every 1);
                # no broken puts.csv rows (there is no puts.csv)
                apps = {a.name: RP.TraceApp(a.name, a.user, a.appltype, a.token, TRACE_LEVELS[role])
                        for role, a in est.apps[s].items()}
                writers[s] = RP.AmqsactPutsWriter(outs[s], est.qmgrs[s], day, apps,
                                                 inject=self.trace_inject.get((s, day), ()),
                                                 wrong_destination=self.wrong_destination(s),
                                                 json_lines=self.trace_format == "json")
                if ledger is not None:
                    writers[s].on_put = ledger.app_put
                self.sd[s] = SenderDay(est, self.cfg, s, day, di, self.shares,
                                       DayOutput(writers[s], 1, channel_trace=channels))
            else:
                out = RP.ApplicationColumnWriter(outs[s]) if s in self.application_senders() else outs[s]
                self.sd[s] = SenderDay(est, self.cfg, s, day, di, self.shares,
                                       DayOutput(out, o.observed_every, self.bad_rows.get((s, day)), channels))
        acct = DayAccounting()
        slots = list(range(TRAFFIC_START_MIN, TRAFFIC_END_MIN, SLOT_MIN))
        captures = est.captures[day]
        instants = sorted(set(slots) | set(captures) | set(changes) | {TRAFFIC_END_MIN})
        outage_events = {e.index: e for e in est.events if e.kind == "outage" and e.start.date() == day}
        n_day = 0
        for m in instants:
            for c in sorted(changes.get(m, []), key=lambda c: (c.order, c.kind, c.qmgr, c.queue)):
                self.cfg.apply(c)
                if c.kind == "retrying":
                    ev = outage_events[c.event]
                    if c.value:
                        end = ev.end or at_min(day, TRAFFIC_END_MIN)
                        browse = ev.start + (end - ev.start) / 2
                        browse = browse.replace(second=0, microsecond=0) + timedelta(minutes=7, seconds=13)
                        if browse >= end:
                            browse = end - timedelta(minutes=1)
                        base = datetime(day.year, day.month, day.day)
                        for s in est.senders:
                            self.sd[s].start_outage(ev.index, int((browse - base).total_seconds() * 1000),
                                                    o.browse_cap)
                    else:
                        self.release(ev, m, acct)
            for s in est.senders:
                self.sd[s].router.sync()
            for s in est.senders:
                self.sd[s].partition_step(m * 60000, s in captures.get(m, ()), acct)
            for qm in captures.get(m, []):
                if not (est.qmgrs[qm].role == "backend" and qm in self.cfg.retrying):
                    self.capture(qm, day, m)
            if m in slots:
                si = slots.index(m)
                if channels is not None:
                    self.inject_stops(channels, day, si, m)
                for s in est.senders:
                    n = self.volume[(s, day)][si]
                    self.sd[s].run_slot(m * 60000, (m + SLOT_MIN) * 60000, n, acct, interval_of(m))
                    n_day += n
                    self.progress.messages(n)
        # after the day's traffic: broken captures, held messages still waiting, accounting, browses
        for b in self.broken_plan:
            if b["day"] != day:
                continue
            if b["kind"] == "truncated":
                self.truncated_capture(b)
            elif b["kind"] == "not_mqsc":
                self.failed_capture(b)
        if channels is not None:
            channels.close(self.sd)
            for stop in channels.done:
                self.channel_stops.append(stop.to_json(self._rel(day, stop.sender,
                                                                 trace_file_name(stop.sender, day, self.trace_format))))
            self.channel_trace_counts[0] += channels.departures
            self.channel_trace_counts[1] += channels.arrivals
            for sd in self.sd.values():
                sd.held_departures = []  # held still at the end of the estate: they never leave
        for s in est.senders:
            sd = self.sd[s]
            sd.finish()
            if s in writers:
                writers[s].close()
                for x in writers[s].injected:
                    self.trace_disagreements.append({"day": day.isoformat(), "sender": s,
                                                     "file": self._rel(day, s, self.puts_name(s, day)), **x})
            outs[s].close()
            for bw in sd.broken_written:
                self.broken.append({"kind": bw["kind"], "file": self._rel(day, s, "puts.csv"), "line": bw["line"],
                                    "expected_reason": bw["expected_reason"],
                                    "effect": "an extra row that describes no real message: quarantined"})
            if sd.held is not None:  # an outage still going at the end of the estate
                self.unresolved(sd.held)
            for k, ws in sd.waiting.items():  # (partitions end before 22:00: never in practice)
                d = sd.router.dests[k]
                for w in ws:
                    key = (d.qmgr, est.queues[w[1]].name)
                    self.undelivered[key] = self.undelivered.get(key, 0) + 1
                    sd.routed[(w[1], k)] = sd.routed.get((w[1], k), 0) + 1
            self.reallocated += sd.reallocated
            if sd.partition_delivered or sd.reallocated:
                self.partition_waits.append({"day": day.isoformat(), "sender": s,
                                             "waited": sd.partition_delivered,
                                             "reallocated": len(sd.reallocated)})
        if ledger is not None:  # after every put is printed: the consumers, the depth truth
            truth = self.depth_truth[day.isoformat()] = ledger.close()
            self.depth_start = ledger.end_depths(truth)
            ct = self.consumer_truth
            for qm, text in ledger.statistics(truth).items():  # MQ's QMinDepth/QMaxDepth of the same changes
                p = self.write(day, qm, "statistics.amqsmon", text)
                ct["statistics"].append(str(p.relative_to(self.out)))
            ct["gets"] += ledger.gets
            ct["backouts"] += ledger.backouts
            ct["pauses"] += [{"day": day.isoformat(), **p} for p in ledger.pauses]
        self.browse(day)
        self.write_accounting(day, acct)
        self.day_truth(day)
        return n_day

    def application_senders(self) -> list[str]:
        """The sending queue managers whose puts.csv carry the optional application column: every second one
        (the others' put files name the application by the open handle alone). None in a trace estate."""
        return [] if self.trace else self.est.senders[1::2]

    def puts_name(self, s: str, day: date) -> str:
        if not self.trace:
            return "puts.csv"
        return f"{s}.{day.isoformat()}." + ("amqsevt.jsonl" if self.trace_format == "json" else "amqsact")

    def _open_trace_file(self, qm: str, name: str):
        p = self.path(self.day, qm, name)  # type: ignore[arg-type]
        self.files.append(str(p.relative_to(self.out)))
        self.channel_trace_files.append(str(p.relative_to(self.out)))
        return open(p, "w", encoding="utf-8", newline="")

    def _open_consumer_file(self, qm: str, name: str):
        p = self.path(self.day, qm, name)  # type: ignore[arg-type]
        self.files.append(str(p.relative_to(self.out)))
        self.consumer_truth["files"].append(str(p.relative_to(self.out)))
        return open(p, "w", encoding="utf-8", newline="")

    def inject_stops(self, channels: ChannelTraces, day: date, si: int, minute: int) -> None:
        """The stops planned in this slot: each on the sending queue manager's busiest running channel so far
        today (by messages routed to it; ties by destination order), stopped ``offset`` minutes into the slot."""
        est = self.est
        for s in est.senders:
            for i, offset, length in self.stop_plan.get((s, day), ()):
                if i != si:
                    continue
                sd = self.sd[s]
                router = sd.router
                busy: dict[int, int] = {}
                for (_qi, k), n in sd.routed.items():
                    busy[k] = busy.get(k, 0) + n
                running = [d for d in router.dests if not d.local and not router.retrying[d.key]
                           and d.channel not in {st.channel for (x, _c), st in channels.stops.items() if x == s}]
                if not running:
                    continue
                d = min(running, key=lambda d: (-busy.get(d.key, 0), d.key))
                caps = [m for m, qms in est.captures[day].items() if s in qms]
                channels.stop(ChannelStop(
                    day, s, d.qmgr, d.channel, sd.xmitq[d.key], (minute + offset) * 60000,
                    (minute + offset + length) * 60000, max(m for m in caps if m <= minute),
                    min(m for m in caps if m >= minute + SLOT_MIN)))

    def wrong_destination(self, sender: str):
        """For an injected disagreement: another host of the queue (else another queue manager) and the
        sending queue manager's transmission queue to it (None when it is the sending queue manager)."""
        est = self.est
        by_name = {q.name: q for q in est.queues}

        def wrong(queue: str, dest: str) -> tuple[str, str | None]:
            q = by_name[queue]
            others = [h for h in q.hosts if h != dest] or sorted(
                n for n, x in est.qmgrs.items() if n != dest and not x.repos)
            w = others[0]
            if w == sender:
                return w, None
            channels = est.channels_of(w)
            channel = next((c for c, cl in channels if cl == q.cluster), channels[0][0])
            return w, est.xmitq_for(sender, channel)

        return wrong

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

import hashlib
import json
import random
import sys
import time
from dataclasses import asdict
from datetime import date, datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import TextIO

import clwl.generate.render as R
import clwl.generate.render_messages as RM
import clwl.generate.render_puts as RP
import clwl.generate.render_zos as RZ
from clwl.generate.accounting import DayAccounting, interval_of
from clwl.generate.build import build_estate
from clwl.generate.channel_trace import TRACE_ENDS, TRACE_FORMATS, ChannelStop, ChannelTraces
from clwl.generate.channel_trace import file_name as trace_file_name
from clwl.generate.estate import (
    BASE_CAPTURE_MIN,
    DISCINT,
    FR_NAMES,
    SLOT_MIN,
    TRAFFIC_END_MIN,
    TRAFFIC_START_MIN,
    Change,
    ConfigState,
    Estate,
    at_min,
    iso,
)
from clwl.generate.held import HeldStore
from clwl.generate.simulate import SenderDay, Shares

GENERATOR_VERSION = 1
PUTS_FORMATS = ("csv", "activity-trace")
DEFAULT_TRACE_DISAGREEMENTS = 3
DEFAULT_CHANNEL_STOPS = 2
TRACE_LEVELS = {"svc": 2, "batch": 3, "recon": 2}  # mqat.ini TRACE= per application: HIGH traces the MQMD
# (GroupId, AccountingToken) of the batch application's groups and bound handles
BROKEN_KINDS = ("truncated", "unbalanced", "bad_hex", "not_mqsc", "short_token")
BROKEN_REASONS = {
    "truncated": "record truncated at end of file",
    "unbalanced": "unbalanced parenthesis",
    "bad_hex": "bad hex in accounting_token",
    "short_token": "accounting_token is not 32 bytes",
    "not_mqsc": "not runmqsc output",
}


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


class Generator:
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
        self.n_disagreements = (DEFAULT_TRACE_DISAGREEMENTS if self.trace else 0) if n is None else n
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

    # -- channel runtime ----------------------------------------------------------------------------
    def channel_state(self, frm: str, to: str, channel: str, t: datetime) -> tuple[str, dict]:
        """State of frm's cluster-sender channel to ``to`` at t, and what DISPLAY CHSTATUS needs."""
        est, cfg = self.est, self.cfg
        day0 = datetime(t.year, t.month, t.day) + timedelta(minutes=5 * 60)
        roles = est.qmgrs[frm].role, est.qmgrs[to].role
        if frm in self.sd and to in cfg.retrying:
            return "RETRYING", {"since": cfg.retrying_since[to]}
        if (frm, to) in cfg.partitioned:
            return "RETRYING", {"since": cfg.partitioned_since[(frm, to)]}
        pair = {frm, to}
        if pair == {"FR1", "FR2"} or ("FR1" in pair and "sender" in roles):
            start = day0 + timedelta(seconds=31 + est.qmgrs[frm].index * 3 + est.qmgrs[to].index % 20)
            if t < start:
                return "INACTIVE", {}
            minutes = int((t - start).total_seconds() // 60)
            msgs = 2 + minutes // 45
            last = start + timedelta(minutes=45 * (msgs - 2)) if msgs > 2 else start
            return "RUNNING", {"start": start, "msgs": msgs, "bytes": msgs * 2316, "last": last}
        if roles[1] == "repos" and roles[0] == "backend":
            recent = [e for e in cfg.admin_changes.get(frm, []) if e <= t and (t - e).total_seconds() <= DISCINT]
            if recent:
                start = max(recent) + timedelta(seconds=1 + FR_NAMES.index(to))
                if start <= t:
                    return "RUNNING", {"start": start, "msgs": 2, "bytes": 2 * 2316, "last": start}
            return "INACTIVE", {}
        sd = self.sd.get(frm)
        if sd is None:
            return "INACTIVE", {}
        key = next((d.key for d in sd.router.dests if d.channel == channel), None)
        if key is None or sd.last_ms[key] < 0:
            return "INACTIVE", {}
        base = datetime(t.year, t.month, t.day)
        t_ms = int((t - base).total_seconds() * 1000)
        if t_ms - sd.last_ms[key] > DISCINT * 1000:
            return "INACTIVE", {}
        ms = lambda v: base + timedelta(milliseconds=v)  # noqa: E731
        return "RUNNING", {"start": ms(sd.inst_start[key]), "msgs": sd.inst_msgs[key],
                           "bytes": sd.inst_bytes[key], "last": ms(sd.last_ms[key]),
                           "before": sd.sent_today[key] - sd.inst_msgs[key]}

    def held_on(self, frm: str, xmitq: str | None = None, to: str | None = None) -> int:
        sd = self.sd.get(frm)
        if sd is None or (sd.held is None and not sd.waiting):
            return 0
        n = 0
        if sd.held is not None:
            for (k, _qi, _p), c in sd.held.counts.items():
                d = sd.router.dests[k]
                if (xmitq is None or sd.xmitq[k] == xmitq) and (to is None or d.qmgr == to):
                    n += c[0]
        for k, ws in sd.waiting.items():  # behind a channel of a partition
            d = sd.router.dests[k]
            if (xmitq is None or sd.xmitq[k] == xmitq) and (to is None or d.qmgr == to):
                n += len(ws)
        return n

    # -- captures ---------------------------------------------------------------------------------
    def config_cmds(self, qm: str, t: datetime, extra_unknown=None) -> list[R.Cmd]:
        est, cfg = self.est, self.cfg
        me = est.qmgrs[qm]
        clus = []
        for other in est.knows[qm]:
            oq = est.qmgrs[other]
            for chl, cl in est.channels_of(other):
                if cl not in me.clusters:
                    continue
                status = "RUNNING" if other == qm else self.channel_state(qm, other, chl, t)[0]
                clus.append(R.clusqmgr_rec(
                    me, oq, chl, cl, weight=cfg.weight[other], prty=cfg.chl_prty[other],
                    altered=cfg.chl_altered[other], learnt=cfg.clus_learnt[other], status=status,
                    suspended=other in cfg.suspended, xmitq="" if other == qm else est.xmitq_for(qm, chl)))
        if me.repos or me.role == "sender":
            insts = [i for i in est.instances if i.host in est.knows[qm]]
        else:
            insts = [i for i in est.instances if i.host == qm]
        insts = sorted(insts, key=lambda i: (i.queue, i.host))
        qc = [R.qcluster_rec(i.queue, est.qmgrs[i.host], i.cluster, altered=cfg.q_altered[(i.queue, i.host)],
                             learnt=cfg.clus_learnt[i.host], put=cfg.put_enabled(i.queue, i.host),
                             prty=cfg.q_prty[(i.queue, i.host)], descr=est.queue(i.queue).descr,
                             persistent=est.queue(i.queue).persistent_share >= 0.5) for i in insts]
        clusters = list(me.clusters)
        return [
            R.Cmd("DISPLAY QMGR ALL", [R.qmgr_rec(me, clusters)]),
            R.Cmd("DISPLAY CLUSQMGR(*) ALL", clus),
            R.Cmd("DISPLAY QCLUSTER(*) ALL", qc),
            R.Cmd("DISPLAY QLOCAL(*) ALL", self.qlocals(qm, t)),
            R.Cmd("DISPLAY QALIAS(*) ALL", R.qalias_recs(me)),
            R.Cmd("DISPLAY QREMOTE(*) ALL", R.qremote_recs(me)),
        ]

    def qlocals(self, qm: str, t: datetime) -> list[R.Rec]:
        est, cfg = self.est, self.cfg
        me = est.qmgrs[qm]
        business = 6 <= t.hour < 22
        sys_q = R.system_qlocals(len(est.knows[qm]) + 3)
        app: dict[str, dict] = {}
        for i in est.instances:
            if i.host != qm:
                continue
            q = est.queue(i.queue)
            enabled = cfg.put_enabled(i.queue, qm)
            app[i.queue] = dict(
                created=i.created, altered=cfg.q_altered[(i.queue, qm)], cluster=i.cluster, defbind="NOTFIXED",
                defpsist="YES" if q.persistent_share >= 0.5 else "NO", descr=q.descr, maxdepth="50000", acctq="ON",
                clwluseq=i.clwluseq, clwlprty=cfg.q_prty[(i.queue, qm)], put="ENABLED" if enabled else "DISABLED",
                ipprocs=2 if enabled else 0, opprocs=1 if business and me.role == "sender" else 0,
                boqname=f"{i.queue}.BACKOUT", bothresh="5")
            app[f"{i.queue}.BACKOUT"] = R.backout_qlocal(i.queue, i.created)
        for name, pat in me.manual_xmitqs:
            app[name] = R.manual_xmitq_qlocal(pat, me.created + timedelta(days=30))
        if me.defclxq == "CHANNEL":
            for other in est.knows[qm]:
                if other != qm:
                    for chl, cl in est.channels_of(other):
                        if cl in me.clusters:
                            app[f"SYSTEM.CLUSTER.TRANSMIT.{chl}"] = R.channel_xmitq_qlocal(
                                me.created + timedelta(minutes=20))
        merged = {**sys_q, **app}
        recs = []
        for name in sorted(merged):
            o = dict(merged[name])
            if o.get("usage") == "XMITQ":
                o["curdepth"] = self.held_on(qm, xmitq=name)
                users = 0
                for other in est.knows[qm]:
                    if other == qm:
                        continue
                    for chl, cl in est.channels_of(other):
                        if cl in me.clusters and est.xmitq_for(qm, chl) == name \
                                and self.channel_state(qm, other, chl, t)[0] == "RUNNING":
                            users += 1
                o["ipprocs"] = users
                o["opprocs"] = 1 if business and me.role == "sender" and users else 0
            recs.append(R.qlocal_rec(me, name, **o))
        return recs

    def chstatus_cmd(self, qm: str, t: datetime) -> R.Cmd:
        est = self.est
        me = est.qmgrs[qm]
        rows = []
        for other in est.knows[qm]:
            if other == qm:
                continue
            for chl, cl in est.channels_of(other):
                if cl not in me.clusters:
                    continue
                st, info = self.channel_state(qm, other, chl, t)
                if st != "INACTIVE":
                    rows.append((chl, "CLUSSDR", other, st, info))
        for frm in sorted(est.qmgrs):
            if frm == qm or qm not in est.knows[frm]:
                continue
            for chl, cl in est.channels_of(qm):
                if cl not in est.qmgrs[frm].clusters:
                    continue
                st, info = self.channel_state(frm, qm, chl, t)
                if st == "RUNNING":
                    rows.append((chl, "CLUSRCVR", frm, st, info))
        recs = []
        for chl, typ, peer, st, info in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
            seed = int(R.hexid(f"{qm}/{chl}/{peer}/{t.date()}", 6), 16) % 400000
            seqbase = 1000 + seed + info.get("before", 0)
            if st == "RETRYING":
                recs.append(R.chstatus_retrying(chl, est.qmgrs[peer], since=info["since"], at=t, seqbase=seqbase,
                                                xmitq=est.xmitq_for(qm, chl), xqmsgsa=self.held_on(qm, to=peer)))
            else:
                recs.append(R.chstatus_running(
                    me, chl, typ, est.qmgrs[peer], start=info["start"], msgs=info["msgs"], nbytes=info["bytes"],
                    last=info["last"], seqbase=seqbase,
                    xmitq=est.xmitq_for(qm, chl) if typ == "CLUSSDR" else "",
                    xqmsgsa=self.held_on(qm, to=peer) if typ == "CLUSSDR" else 0))
        return R.Cmd("DISPLAY CHSTATUS(*) ALL", recs, empty_msg="AMQ8420")

    def zos_config_cmds(self, qm: str, t: datetime) -> list[R.Cmd]:
        """What a member's capture holds: DISPLAY QMGR (QSGNAME, IGQ), GROUP, CFSTRUCT and the rest as for
        runmqsc, SYSTEM.QSG.TRANSMIT.QUEUE among the local queues."""
        est = self.est
        group = est.qsg
        assert group is not None
        me = est.qmgrs[qm]
        cmds = self.config_cmds(qm, t)
        qlocal = next(c for c in cmds if c.text.startswith("DISPLAY QLOCAL"))
        qlocal.recs.append(RZ.shared_xmitq_rec(me, group.maxmsgl, min(est.qmgrs[m].created for m in group.members)))
        qlocal.recs.sort(key=lambda r: r.attrs[0][1])
        created = min(est.qmgrs[m].created for m in group.members) + timedelta(minutes=3)
        return [R.Cmd("DISPLAY QMGR ALL", [RZ.qmgr_rec(me, list(me.clusters), group.name, self.cfg.igq[qm])]),
                R.Cmd("DISPLAY GROUP"),
                R.Cmd("DISPLAY CFSTRUCT(*) ALL", RZ.cfstruct_recs(group.cflevel, created))] + cmds[1:]

    def zos_group(self) -> tuple[str, list[RZ.Member]]:
        group = self.est.qsg
        assert group is not None
        return group.name, [RZ.Member(m, n) for n, m in enumerate(group.members, 1)]

    def capture(self, qm: str, day: date, minute: int) -> None:
        t = at_min(day, minute)
        hhmmss = f"{minute // 60:02d}{minute % 60:02d}00"
        q = self.est.qmgrs[qm]
        if q.zos:  # CSQUTIL COMMAND output of a member of the queue-sharing group
            self.write(day, qm, f"config_{hhmmss}.txt",
                       RZ.render_csqutil(q, t, self.zos_config_cmds(qm, t), group=self.zos_group()))
            self.write(day, qm, f"chstatus_{hhmmss}.txt", RZ.render_csqutil(q, t, [self.chstatus_cmd(qm, t)]))
            return
        cmds = self.config_cmds(qm, t)
        if qm in self.rest:
            self.write(day, qm, f"config_{hhmmss}.json", R.render_rest(cmds))
        else:
            text = R.render_mqsc(q, cmds)
            for b in self.broken_plan:
                if b["kind"] == "unbalanced" and b["day"] == day and b["qmgr"] == qm and minute == BASE_CAPTURE_MIN:
                    text = self._unbalance(text, b)
            self.write(day, qm, f"config_{hhmmss}.mqsc", text)
        self.write(day, qm, f"chstatus_{hhmmss}.mqsc", R.render_mqsc(q, [self.chstatus_cmd(qm, t)]))

    def _unbalance(self, text: str, b: dict) -> str:
        y = self.est.qmgrs[b["record_of"]]
        good = f"CONNAME({y.conname})"
        pos = text.find(good)
        assert pos > 0 and text.count(good) == 1, (b, text.count(good))
        header = text.rfind("\nAMQ8441", 0, pos) + 1
        line = text.count("\n", 0, header) + 1
        self.broken.append({"kind": "unbalanced", "file": self._rel(b["day"], b["qmgr"],
                                                                     f"config_{BASE_CAPTURE_MIN // 60:02d}"
                                                                     f"{BASE_CAPTURE_MIN % 60:02d}00.mqsc"),
                            "line": line, "expected_reason": BROKEN_REASONS["unbalanced"],
                            "effect": f"the CLUSQMGR({y.name}) record is quarantined; the rest of the file is "
                                      f"accepted (a full repository's view: no effect on routing)"})
        return text[:pos] + good[:-1] + " " + text[pos + len(good):]

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
                self.sd[s] = SenderDay(est, self.cfg, s, day, di, self.shares, writers[s], 1,
                                       channel_trace=channels)
            else:
                out = RP.ApplicationColumnWriter(outs[s]) if s in self.application_senders() else outs[s]
                self.sd[s] = SenderDay(est, self.cfg, s, day, di, self.shares, out, o.observed_every,
                                       self.bad_rows.get((s, day)), channel_trace=channels)
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

    def release(self, ev, minute: int, acct: DayAccounting) -> None:
        for s in self.est.senders:
            store = self.sd[s].end_outage(minute * 60000, acct)
            if store is not None and store.total:
                self.held_truth.append(self._held_json(store, ev, released=at_min(self.day, minute)
                                                       - timedelta(seconds=1)))

    def unresolved(self, store: HeldStore) -> None:
        ev = self.est.events[store.outage]
        sd = self.sd[store.sender]
        for (k, qi, _p), c in store.counts.items():
            key = (sd.router.dests[k].qmgr, self.est.queues[qi].name)
            self.undelivered[key] = self.undelivered.get(key, 0) + c[0]
        if store.total:
            self.held_truth.append(self._held_json(store, ev, released=None))

    def _held_json(self, store: HeldStore, ev, released: datetime | None) -> dict:
        sd = self.sd[store.sender]
        by_q: dict[str, int] = {}
        for (_k, qi, _p), c in sorted(store.counts.items()):
            by_q[self.est.queues[qi].name] = by_q.get(self.est.queues[qi].name, 0) + c[0]
        base = datetime(self.day.year, self.day.month, self.day.day)
        chl = next((d.channel for d in sd.router.dests if d.qmgr == ev.qmgr), "")
        return {"outage": ev.index, "sender": store.sender, "dest": ev.qmgr, "channel": chl,
                "xmitq": self.est.xmitq_for(store.sender, chl) if chl else "",
                "held": store.total, "by_queue": dict(sorted(by_q.items())),
                "by_reason": dict(sorted(store.reasons.items())),
                "released_at": iso(released) if released else None,
                "browse_at": iso(base + timedelta(milliseconds=store.browse_ms)),
                "on_xmitq_at_browse": store.at_browse, "in_browse_file": len(store.kept),
                "browse_msg_ids": [m.msg_id.hex().upper() for m in store.kept[:50]]}

    def truncated_capture(self, b: dict) -> None:
        day, qm, minute = b["day"], b["qmgr"], b["minute"]
        t = at_min(day, minute)
        q = self.est.qmgrs[qm]
        if q.zos:
            full, conname, head, ext = RZ.render_csqutil(q, t, [self.chstatus_cmd(qm, t)]), "\nCONNAME(", \
                "\nCSQM201I", "txt"
        else:
            full, conname, head, ext = R.render_mqsc(q, [self.chstatus_cmd(qm, t)]), "\n   CONNAME(", "\nAMQ8417", \
                "mqsc"
        cut = full.rfind(conname)
        assert cut > 0
        text = full[:cut + len(conname) + 6]
        header = max(text.rfind(head), -1) + 1
        line = text.count("\n", 0, header) + 1
        name = f"chstatus_{minute // 60:02d}{minute % 60:02d}00.{ext}"
        self.write(day, qm, name, text)
        self.broken.append({"kind": "truncated", "file": self._rel(day, qm, name), "line": line,
                            "expected_reason": BROKEN_REASONS["truncated"],
                            "effect": "the capture job was killed mid-write: the complete records are accepted, "
                                      "the last one is quarantined (after the day's traffic)"})

    def failed_capture(self, b: dict) -> None:
        day, qm, minute = b["day"], b["qmgr"], b["minute"]
        q = self.est.qmgrs[qm]
        name = f"config_{minute // 60:02d}{minute % 60:02d}00.{'txt' if q.zos else 'mqsc'}"
        self.write(day, qm, name, f"ssh: connect to host {q.ip} port 22: No route to host\n"
                                  f"capture-mq.sh: runmqsc capture of {qm} failed (rc=255), output kept for the "
                                  f"record\n")
        self.broken.append({"kind": "not_mqsc", "file": self._rel(day, qm, name), "line": 0,
                            "expected_reason": BROKEN_REASONS["not_mqsc"],
                            "effect": "the whole file is in no known format: rejected as a file"})

    # -- browses ----------------------------------------------------------------------------------
    def browse(self, day: date) -> None:
        est = self.est
        base = datetime(day.year, day.month, day.day)
        for si, s in enumerate(est.senders):
            sd = self.sd[s]
            apps = est.apps[s]
            for store in sd.held_stores:
                if not store.kept:
                    continue
                at = base + timedelta(milliseconds=store.browse_ms)
                ev = est.events[store.outage]
                since = ev.start - timedelta(seconds=1)
                retries = R.retry_times(since, at)
                msgs = []
                for m in store.kept:
                    a = apps[m.app_role]
                    put_t = base + timedelta(milliseconds=m.t_ms)
                    outer_t = put_t
                    if not m.zero:  # re-allocation re-driven at each failed retry: PutDate/PutTime follow
                        tried = [r for r in retries if put_t <= r <= at]
                        if tried:
                            outer_t = tried[-1] + timedelta(milliseconds=310)
                    md = RM.outer_md(m, a.user, a.name, a.appltype, a.token, s, outer_t)
                    data = RM.payload(m.queue, a.name, m.length, m.msg_id, day.strftime("%Y%m%d"), m.group_seq)
                    msgs.append((md, RM.xmit_data(m, a.user, a.name, a.appltype, a.token, s, put_t, data)))
                xq = store.kept[0].xmitq
                hhmmss = at.strftime("%H%M%S")
                if si % 2 == 0:
                    name = f"xmitq_{hhmmss}.amqsbcg"
                    self.write(day, s, name, RM.render_amqsbcg(xq, msgs))
                else:
                    name = f"xmitq_{hhmmss}.dmpmqmsg"
                    self.write(day, s, name, RM.render_dmpmqmsg(s, xq, at, msgs))
                self.browses.append({"file": self._rel(day, s, name), "xmitq": xq, "outage": store.outage,
                                     "messages": len(msgs), "on_xmitq": store.at_browse,
                                     "zero_token": sum(1 for m in store.kept if m.zero),
                                     "truncated_to_cap": store.at_browse > len(msgs)})

    # -- accounting -------------------------------------------------------------------------------
    def write_accounting(self, day: date, acct: DayAccounting) -> None:
        est = self.est
        base = datetime(day.year, day.month, day.day)
        if self.zos:  # z/OS accounts in SMF type 116 records, not amqsmon: the members write no accounting
            acct.cells = {key: c for key, c in acct.cells.items() if key[0] not in self.zos}
        # injected skews
        for sk in self.skew_plan:
            if sk["day"] != day:
                continue
            totals: dict[tuple[str, int, str], int] = {}
            for (recv, iv, _conn, queue), c in acct.cells.items():
                totals[(recv, iv, queue)] = totals.get((recv, iv, queue), 0) + c[0] + c[1]
            taken = {(x["receiver"], x["interval"], x["queue"]) for x in self.skews if x["day"] == day.isoformat()}
            cands = sorted((k for k, v in totals.items() if k not in taken), key=lambda k: (-totals[k], k))
            if not cands:
                continue
            top = totals[cands[0]]
            pool = [k for k in cands if totals[k] >= max(1, top // 2)]
            rng = random.Random(f"clwl-generate/{self.o.seed}/skew/{sk['n']}")
            recv, iv, queue = pool[rng.randrange(len(pool))]
            f = sk["factor"]
            before = after = 0
            for (r2, iv2, _conn, q2), c in sorted(acct.cells.items()):
                if (r2, iv2, q2) != (recv, iv, queue):
                    continue
                for p in (0, 1):
                    n_old = c[p]
                    n_new = int(n_old * f + Fraction(1, 2))
                    before += n_old
                    after += n_new
                    if n_old:
                        c[2 + p] = int(c[2 + p] * n_new / n_old) if n_new else 0
                    c[p] = n_new
                    if n_new == 0:
                        c[4 + 2 * p] = c[5 + 2 * p] = 0
            i0 = base + timedelta(minutes=5 * 60, seconds=iv * 1800)
            self.skews.append({"day": day.isoformat(), "receiver": recv, "queue": queue, "interval": iv,
                               "interval_start": iso(i0), "interval_end": iso(i0 + timedelta(seconds=1800)),
                               "factor": str(f), "true_count": before, "written_count": after,
                               "delta": after - before})
        by_recv: dict[str, list] = {}
        for (recv, iv, conn, queue), c in acct.cells.items():
            by_recv.setdefault(recv, []).append((iv, conn, queue, c))
            t = self.accounting_truth.setdefault(day.isoformat(), {}).setdefault(recv, {})
            t[queue] = t.get(queue, 0) + c[0] + c[1]
        for recv in sorted(by_recv):
            q = est.qmgrs[recv]
            conns = sorted({conn for _, conn, _, _ in by_recv[recv]})
            records = []
            for ci, conn in enumerate(conns):
                rows = sorted((iv, queue, c) for iv, cn, queue, c in by_recv[recv] if cn == conn)
                h = hashlib.sha256(f"{recv}/{conn}/{day}".encode()).digest()
                if conn[0] == "mca":
                    name, user = "amqrmppa", "mqm"
                else:
                    app = next(a for apps in est.apps.values() for a in apps.values() if a.name == conn[1])
                    name, user = app.name, app.user
                pid, tid = 2000 + int.from_bytes(h[:2], "big") % 28000, 1 + h[2] % 40
                cid = (b"AMQC" + recv.ljust(12).encode()[:12] + bytes([0x5B, 0x40 + ((day.toordinal() >> 7) & 0x3F),
                                                                      day.toordinal() & 0x7F, 0x10 + ci % 0x60])
                       + bytes([0x02, 0x29, h[3] & 0x7F, h[4] & 0x7F]))
                opened: dict[str, datetime] = {}
                seq = 0
                ivs = sorted({iv for iv, _, _ in rows})
                for iv in ivs:
                    i0 = base + timedelta(minutes=5 * 60, seconds=iv * 1800)
                    i1 = i0 + timedelta(seconds=1800)
                    start = i0
                    if seq == 0:  # a connection's first record starts when it connected (just before its
                        first = acct.first_arrival[(recv, conn)] - 15  # first put), to the second
                        start = max(i0, base + timedelta(seconds=first // 1000))
                    groups = [(queue, c) for iv2, queue, c in rows if iv2 == iv]
                    rec = RM.accounting_head(q, start, i1, cid, seq, name, pid, tid, user, len(groups))
                    for gi, (queue, c) in enumerate(groups):
                        first = queue not in opened
                        if first:
                            opened[queue] = start
                        rec += RM.queue_group(gi, queue, est.instance(queue, recv).created, first, opened[queue], c)
                    records.append((i1, name, conn, seq, rec))
                    seq += 1
            records.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
            self.write(day, recv, "accounting.amqsmon", RM.render_amqsmon([r[4] for r in records]))

    # -- ground truth -----------------------------------------------------------------------------
    def day_truth(self, day: date) -> None:
        est = self.est
        for s in est.senders:
            sd = self.sd[s]
            dest: dict[str, dict[str, int]] = {}
            for (qi, k), n in sorted(sd.routed.items()):
                d = sd.router.dests[k]
                qd = dest.setdefault(est.queues[qi].name, {})
                qd[d.qmgr] = qd.get(d.qmgr, 0) + n
            kinds = dict(sd.kinds)
            kinds["notfixed"] = sd.msg_count - sum(sd.kinds.values())
            truth = {
                "day": day.isoformat(), "sender": s, "puts": sd.msg_count,
                "rows_in_puts_csv": 0 if self.trace else sd.msg_count + len(sd.broken_written),
                "by_queue_and_destination": {q: dict(sorted(v.items())) for q, v in sorted(dest.items())},
                "by_kind": dict(sorted(kinds.items())), "zero_token": sd.zero_tokens,
                "factor_resets": sd.router.resets,
            }
            if self.trace:
                truth["traced_puts"] = sd.msg_count
            if est.qsg is not None:  # the delivery paths (and only then, so that other estates are unchanged)
                local = sum(n for (_qi, k), n in sd.routed.items() if k == sd.router.local_key)
                truth["by_path"] = {"local": local, "cluster": sd.msg_count - local - sd.igq_msgs,
                                    "igq": sd.igq_msgs}
                truth["igq_too_large"] = sd.too_large
            self.truth_days.append(truth)

    def ground_truth(self, total: int) -> dict:
        est, o = self.est, self.o
        args = {k: (v.isoformat() if isinstance(v, date) else v) for k, v in asdict(o).items()
                if k not in ("out", "force", "quiet") and not (k == "partitions" and not v)
                and k not in ("puts_format", "trace_disagreements", "channel_trace", "trace_format", "channel_stops",
                              "channel_trace_ends")
                and not (k.startswith("qsg") and not o.qsg)}
        if self.trace:  # only then, so that a puts.csv estate's ground truth is that of earlier versions
            args["puts_format"] = o.puts_format
            args["trace_disagreements"] = self.n_disagreements
        expected: dict[str, dict[str, int]] = {}
        for d in self.truth_days:
            for q, dests in d["by_queue_and_destination"].items():
                for qm, n in dests.items():
                    e = expected.setdefault(qm, {})
                    e[q] = e.get(q, 0) + n
        written: dict[str, dict[str, int]] = {}
        for _day, recvs in self.accounting_truth.items():
            for recv, qs in recvs.items():
                for q, n in qs.items():
                    w = written.setdefault(recv, {})
                    w[q] = w.get(q, 0) + n
        truth = {
            "generator": "clwl generate", "version": GENERATOR_VERSION,
            "args": args,
            "assumptions": [
                "CLWL as docs/algorithm.md (default profile) with the readings of docs/cli-contract.md",
                "routing state per sending queue manager and channel, shared by all queues; zero at 05:00 each day",
                "DestSeqFactor += exactly 1000/CLWLWGHT (integers over a common denominator)",
                "ties: lowest DestSeqFactor, lowest DestSeqNumber, queue manager name, channel name",
                "DestSeqFactors reset when a known cluster receiver's CLWLWGHT/CLWLPRTY/CLWLRANK/NETPRTY changes; "
                "not on RETRYING -> RUNNING, suspend/resume or queue attribute changes",
                "every change happens 1 s before a capture of every sending queue manager; no puts from 2 s "
                "before to 1 s after any half-hour mark",
                "no change while a channel is RETRYING; a held message meets the same candidates at every "
                "re-allocation attempt, so it stays",
                "bind-on-open handles / logically ordered groups bound to an instance that becomes PUT(DISABLED) "
                "end (the application gets an error and closes)",
                "held messages are delivered 1 s before the capture that shows the channel RUNNING again and "
                "are counted in the accounting interval that ends there",
                "accounting: ACCTINT 1800 from 05:00; one record per connection (receiving channel agent per "
                "sending queue manager, or the local application) and interval with puts",
                "_generate.json is not an input: ingest should skip files whose name starts with '_'",
            ],
            "estate": {
                "clusters": est.clusters,
                "qmgrs": [{"name": q.name, "role": q.role, "clusters": list(q.clusters), "version": q.version,
                           "defclxq": q.defclxq, "manual_xmitqs": [list(x) for x in q.manual_xmitqs],
                           "channels": [c for c, _ in est.channels_of(q.name)],
                           "initial_clwlwght": est.initial_weight[q.name],
                           "config_format": "zos" if q.zos else "rest" if q.name in self.rest else "mqsc"}
                          for q in sorted(est.qmgrs.values(), key=lambda q: q.index)],
                "queues": [{"name": q.name, "cluster": q.cluster, "instances": list(q.hosts),
                            "clwluseq": {i.host: i.clwluseq for i in est.instances if i.queue == q.name
                                         and i.clwluseq != "QMGR"}} for q in est.queues],
                "senders": est.senders,
                "weight_denominator": est.weight_denominator(),
            },
            "events": [e.to_json() for e in est.events],
            "captures": {d.isoformat(): {f"{m // 60:02d}{m % 60:02d}00": qms for m, qms in caps.items()}
                         for d, caps in est.captures.items()},
            "totals": {"puts": total, "files": len(self.files) + 1,
                       "rows_in_puts_csv": sum(d["rows_in_puts_csv"] for d in self.truth_days)},
            "traffic": self.truth_days,
            "expected_by_receiver": {k: dict(sorted(v.items())) for k, v in sorted(expected.items())},
            "held": self.held_truth,
            "undelivered_by_receiver": {f"{qm}/{q}": n for (qm, q), n in sorted(self.undelivered.items())},
            "accounting_written_by_receiver": {k: dict(sorted(v.items())) for k, v in sorted(written.items())},
            "accounting_by_day": self.accounting_truth,
            "skews": self.skews,
            "browses": self.browses,
            "broken_records": sorted(self.broken, key=lambda b: (b["file"], b["line"])),
        }
        if getattr(o, "partitions", 0):
            truth["assumptions"].append(
                "partition: the channels from one sending queue manager to every host of one queue RETRYING "
                "together; step 12 rotates among them and the messages wait. At the capture where one comes back "
                "(the others' failed retry), eligible waiting messages are re-driven without advancing the "
                "rotation and move to it; zero-token (bound, named) ones stay until their channel runs again")
            truth["reallocated"] = self.reallocated
            truth["partition_waits"] = self.partition_waits
        if est.qsg is not None:
            truth["qsg"] = est.qsg.to_json(est.senders)
            truth["qsg"]["by_path"] = {p: sum(d["by_path"][p] for d in self.truth_days)
                                       for p in ("local", "cluster", "igq")}
            truth["qsg"]["igq_too_large"] = sum(d["igq_too_large"] for d in self.truth_days)
            truth["assumptions"] += [
                "qsg: the members are z/OS queue managers (platform MVS) in queue-sharing group "
                f"{est.qsg.name}; their captures are CSQUTIL COMMAND output (config_HHMMSS.txt: DISPLAY QMGR with "
                "QSGNAME and IGQ, DISPLAY GROUP, DISPLAY CFSTRUCT, the cluster objects, the local queues with the "
                "shared SYSTEM.QSG.TRANSMIT.QUEUE; chstatus_HHMMSS.txt); they write no amqsmon accounting (z/OS "
                "accounts in SMF)",
                "IGQ (IBM, Clustering with intra-group queuing): the destination is chosen as without it; the "
                "message goes over SYSTEM.QSG.TRANSMIT.QUEUE (observed_xmitq, no observed_channel) when the "
                "sending queue manager is a member with IGQ(ENABLED) at the put, the destination another member "
                "and its length at most qsg.igq_max_message: min(the structure's largest message, the shared "
                "queue's MAXMSGL) less the 428-byte MQXQH; otherwise the cluster path; the receiving member's "
                "IGQ does not matter; an IGQ change (igq_change events) takes effect from the capture that "
                "shows it",
                "IGQ messages never wait: not behind a retrying channel (outage), and partitions never involve a "
                "queue with an instance on a member; message lengths: qsg.SizeMix (most small, some just under "
                "or over the limit, the limit itself and one byte over, a few far over, none above 4 MB less "
                "the MQXQH)"]
        if self.application_senders():
            truth["puts_application_column"] = self.application_senders()
            truth["assumptions"].append(
                "the puts.csv of the senders in puts_application_column have the optional application column, "
                "the application the row's open handle (application:pid:handle) names; the others have not")
        if self.trace:
            truth["puts_format"] = "activity-trace"
            truth["totals"]["traced_puts"] = sum(d["traced_puts"] for d in self.truth_days)
            truth["assumptions"].append(
                "activity trace: per sending queue manager and day <QM>.<date>.amqsact, amqsact -v output of the "
                "simulation's puts; one connection per application (MQCONNX, an MQOPEN per handle before its first "
                "put, MQPUTs on two threads, MQCLOSE and MQDISC at the end of the day), ActivityCount 100 and "
                "ActivityInterval 60 s; svc and recon traced at MEDIUM, batch at HIGH (MQMD and MQPMO dumps: "
                "GroupId, AccountingToken; the last message of a group is not flagged MQMF_LAST_MSG_IN_GROUP); "
                "times UTC; Resolved_Q_mgr / Resolved_local_Q_name are the simulation's destination and "
                "transmission queue except for the puts in trace_disagreements")
            truth["trace_disagreements"] = self.trace_disagreements
        if self.trace_format != "amqsact":
            args["trace_format"] = self.trace_format
        if self.channel_trace:  # only then, as above
            args["channel_trace"] = True
            args["channel_stops"] = self.n_stops
            args["channel_trace_ends"] = self.trace_ends
            truth["channel_trace"] = {"format": self.trace_format, "files": sorted(self.channel_trace_files),
                                      "departures": self.channel_trace_counts[0],
                                      "arrivals": self.channel_trace_counts[1]}
            truth["channel_stops"] = self.channel_stops
            truth["assumptions"].append(
                "channel agents' trace: per queue manager and day <QM>.<date>.channels.amqsact (amqsevt.jsonl with "
                "trace_format json), its cluster-sender agents' MQGETs (transmission header: the application's "
                "MsgId, RemoteQMgr, RemoteQName) and, with channel_trace_ends both, its cluster-receiver agents' "
                "MQPUTs, at MEDIUM, in batches under "
                "syncpoint (MQCMIT after 50 messages or an empty queue); a message leaves 2 ms after its put over a "
                "running channel, 1 s before the capture that shows its channel back after an outage or partition, "
                "and at the restart of an injected stop (channel_stops); it arrives 3 ms after it leaves")
            truth["assumptions"].append(
                "channel_stops: a cluster-sender channel stopped and restarted between two status captures of its "
                "sending queue manager, which both show it RUNNING; the routing is what the captures decide (as "
                "without the stop), the messages put to it in the window wait and leave at the restart")
        return truth

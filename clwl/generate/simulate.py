"""One sending queue manager's traffic on one day: its messages generated (queues, lengths, bind on open, groups,
named target queue managers), each routed by the generator's own reading of the algorithm (``routing``; it
deliberately imports nothing from the engine under test: the pipeline agreeing with it must mean something),
written as put records, held behind an outage (``held``) or waiting behind a partition (``partition``), and
counted for the receivers' accounting (``accounting``)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date
from typing import Any, NamedTuple, Optional

import clwl.generate.qsg as Q
from clwl.generate.accounting import DayAccounting, interval_of
from clwl.generate.estate import (
    DISCINT,
    QUIET_AFTER_MS,
    QUIET_BEFORE_MS,
    ConfigState,
    Estate,
)
from clwl.generate.held import HeldMessage, HeldStore
from clwl.generate.ids import LOW_HEX, MS_SUFFIX, ZERO_TOKEN_HEX, hms, id_prefix, seven_bit
from clwl.generate.partition import W_ROW, PartitionWaits
from clwl.generate.render_puts import PUTS_CSV_HEADER
from clwl.generate.routing import SenderRouter

# --------------------------------------------------------------------------------------------------
# One sending queue manager's traffic on one day


@dataclass
class Shares:
    bind_open: float
    bind_group: float
    named: float
    group_logical: float = 0.85


@dataclass(frozen=True)
class DayOutput:
    """Where one sender's day is written: ``puts``, the put-record writer (CSV, or the activity trace's); every how
    many messages a sample is observed; data rows followed by broken ones (quarantine cases, by row index); the
    channel agents' trace, when generated."""

    puts: Any
    observed_every: int = 1
    broken_rows: Optional[dict[int, list[str]]] = None
    channel_trace: Any = None


class HeldPut(NamedTuple):
    """A message held on a retrying channel's transmission queue: its number in the day, the application role that
    put it, why it is held, and how it was bound (``_svc_bound_put``'s or ``_special``'s detail, or None)."""

    count: int
    role: str
    reason: str
    detail_args: Any


class SenderDay(PartitionWaits):
    """Generates, routes and writes (puts.csv) one sending queue manager's messages of one day."""

    MAX_SESSIONS = 4

    def __init__(self, estate: Estate, cfg: ConfigState, sender: str, day: date, day_index: int, shares: Shares,
                 output: DayOutput):
        self.estate, self.cfg, self.sender, self.day, self.di = estate, cfg, sender, day, day_index
        self.rng = random.Random(f"clwl-generate/{estate.seed}/traffic/{sender}/{day.isoformat()}")
        self.router = SenderRouter(estate, cfg, sender)
        self.shares = shares
        self.out = output.puts
        self.observed_every = max(1, output.observed_every)
        self.broken_rows = output.broken_rows or {}
        self.broken_written: list[dict] = []
        self.day_prefix = day.isoformat() + "T"
        apps = estate.apps[sender]
        self.apps = apps
        self.tokens = {role: a.token.hex().upper() for role, a in apps.items()}
        nq = len(estate.queues)
        self.nq = nq
        self.qnames = [q.name for q in estate.queues]
        weights = estate.queue_weights[sender]
        table: list[int] = []
        total = sum(weights)
        for qi, w in enumerate(weights):
            table += [qi] * max(1, round(1024 * w / total))
        self.qtable = table
        self.qpick = table + [table[-1]]  # one spare entry: a float product that rounds up to len(table)
        # the applications restart with the queue manager: a new process id every day
        self.pids = {role: 2000 + (a.pid + 7919 * day_index) % 28000 for role, a in apps.items()}
        self.handles = {role: [f"{a.name}:{self.pids[role]}:{qi + 1}" for qi in range(nq)]
                        for role, a in apps.items()}
        self.batch_handles = nq  # batch handles after the per-queue ones
        # --event bind-on-open: from its day the service application opens each queue with MQOO_BIND_ON_OPEN once
        # and keeps the handle all day, as a long-running service does, so the day's puts follow its first choice
        # (queue index -> [handle, key]); None: it puts not fixed
        since = estate.bind_on_open_from.get(sender)
        self.svc_bound: dict[int, list] | None = {} if since is not None and day >= since else None
        self.len_lo = [q.length_lo for q in estate.queues]
        self.len_span = [q.length_hi - q.length_lo + 1 for q in estate.queues]
        self.pshare = [q.persistent_share for q in estate.queues]
        self.msg_prefix = id_prefix(sender, day_index, 0)
        self.msg_prefix_hex = self.msg_prefix.hex().upper()
        self.group_prefix = id_prefix(sender, day_index, 1)
        self.msg_count = 0
        self.group_count = 0
        r = self.router
        n = len(r.dests)
        self.n_keys = n
        self.obs = []
        for d in r.dests:
            if d.local:
                self.obs.append(f"{d.qmgr},,")
            else:
                self.obs.append(f"{d.qmgr},{d.channel},{estate.xmitq_for(sender, d.channel)}")
        self.xmitq = ["" if d.local else estate.xmitq_for(sender, d.channel) for d in r.dests]
        # --qsg: a sending member's destinations in its group (IGQ when its IGQ is ENABLED and the message fits),
        # the lengths around the IGQ limit; None otherwise (the estate of earlier versions)
        group = estate.qsg
        self.igq_dest: list[bool] | None = None
        self.sizes: Q.SizeMix | None = None
        self.igq_limit = 0
        self.igq_msgs = self.too_large = 0  # this day's messages over IGQ; to a member, IGQ ENABLED, too large
        if group is not None:
            self.igq_limit = group.limit
            self.sizes = Q.SizeMix(random.Random(f"clwl-generate/{estate.seed}/sizes/{sender}/{day.isoformat()}"),
                                   group.limit)
            if sender in group.members:
                self.igq_dest = [not d.local and d.qmgr in group.members for d in r.dests]
                self.obs_igq = [f"{d.qmgr},,{Q.QSG_XMITQ}" for d in r.dests]
        # per-day results
        self.sessions: list[list] = []  # [handle, queue index, key or -1, remaining]
        self.group: list | None = None  # [handle, qi, group id bytes, seq, remaining, logical, key]
        self.routed: dict[tuple[int, int], int] = {}  # (queue index, key) -> messages routed there
        self.kinds = {"open": 0, "group_logical": 0, "group_unmanaged": 0, "named": 0}  # the rest: not fixed
        self.zero_tokens = 0
        self.held: HeldStore | None = None  # the current outage's held messages, if any
        self.held_stores: list[HeldStore] = []
        # partitions: messages waiting behind a channel of a partition, by key (see _wait); the rows of
        # puts.csv stay in memory while an eligible one waits (its observed destination may change)
        self.waiting: dict[int, list[list]] = {}
        self.eligible_waiting = 0
        self.reallocated: list[dict] = []
        self.partition_delivered = 0
        # channel runtime (for DISPLAY CHSTATUS): per key
        self.first_ms = [-1] * n  # first message of the current slot
        self.last_ms = [-1] * n  # last message sent (ms of day)
        self.inst_start = [-1] * n
        self.inst_msgs = [0] * n
        self.inst_bytes = [0] * n
        self.sent_today = [0] * n
        self.prev_last = [-1] * n  # last message before the current slot
        self.csv_rows: list[str] = []
        # the channel agents' trace (clwl.generate.channel_trace.ChannelTraces) is told when each message leaves its
        # transmission queue; held messages wait here for the end of their outage: (key, msg id, put ms, queue
        # index, length, persistent)
        self.channel_trace = output.channel_trace
        self.held_departures: list[tuple[int, str, int, int, int, int]] = []
        # an output that prints handles (the activity trace) is told where each ends, handle_ends: 2 x data row
        # (closed before that row's put) or 2 x row + 1 (after it) -> handles; and the rows that are the last
        # message of their group (group_last)
        self.handle_ends: dict[int, list[str]] | None = getattr(output.puts, "handle_ends", None)
        self.group_last: set[int] | None = getattr(output.puts, "group_last", None)
        self.out.write(PUTS_CSV_HEADER)

    # -- sessions and groups ------------------------------------------------------------------------
    def _bound_still_open(self, key: int, qi: int) -> bool:
        d = self.router.dests[key]
        return self.cfg.put_enabled(self.qnames[qi], d.qmgr)

    def _new_handle(self, role: str) -> str:
        self.batch_handles += 1
        return f"{self.apps[role].name}:{self.pids[role]}:{self.batch_handles}"

    def _ended(self, handle: str, after: bool) -> None:
        """The handle is closed before (or after) the put of the message being made (row msg_count - 1)."""
        if self.handle_ends is not None:
            self.handle_ends.setdefault(2 * (self.msg_count - 1) + after, []).append(handle)

    def _session(self) -> list:
        rnd = self.rng.random
        # a bound handle whose instance was PUT(DISABLED) since: the application gets an error and closes
        kept = [s for s in self.sessions if s[2] < 0 or self._bound_still_open(s[2], s[1])]
        if self.handle_ends is not None and len(kept) < len(self.sessions):
            for s in self.sessions:
                if s not in kept:
                    self._ended(s[0], after=False)
        self.sessions = kept
        if not self.sessions or (len(self.sessions) < self.MAX_SESSIONS and rnd() < 0.1):
            s = [self._new_handle("batch"), self.qtable[int(rnd() * len(self.qtable))], -1,
                 self.rng.randint(5, 40)]
            self.sessions.append(s)
            return s
        return self.sessions[int(rnd() * len(self.sessions))]

    def _group(self) -> list:
        g = self.group
        if g is not None and g[4] > 0 and (g[6] < 0 or not g[5] or self._bound_still_open(g[6], g[1])):
            return g
        if g is not None and g[4] > 0:  # its bound instance was PUT(DISABLED): the application closes it
            self._ended(g[0], after=False)
        rnd = self.rng.random
        self.group_count += 1
        gid = self.group_prefix + seven_bit(self.group_count)
        g = [self._new_handle("batch"), self.qtable[int(rnd() * len(self.qtable))], gid, 0,
             self.rng.randint(2, 6), rnd() < self.shares.group_logical, -1]
        self.group = g
        return g

    # -- one slot -------------------------------------------------------------------------------------
    def run_slot(self, start_ms: int, end_ms: int, n: int, acct: DayAccounting, interval: int) -> None:
        """Put ``n`` messages in [start_ms + 1 s, end_ms - 2 s), in time order, route them, write them."""
        router = self.router
        router.sync()
        rng = self.rng
        rnd = rng.random
        sh = self.shares
        p_open = sh.bind_open
        p_group = p_open + sh.bind_group
        p_special = p_group + sh.named
        qpick = self.qpick
        qscale = len(self.qtable) / (1.0 - p_special) if p_special < 1 else 0.0
        qnames = self.qnames
        len_lo, len_span, pshare = self.len_lo, self.len_span, self.pshare
        retrying = router.retrying
        route_queue = router.route_queue
        sender = self.sender
        svc_handles = self.handles["svc"]
        svc_token = self.tokens["svc"]
        obs, obs_every = self.obs, self.observed_every
        rows = self.csv_rows
        out = self.out
        cells: dict[int, list[int]] = {}
        first_ms, last_ms = self.first_ms, self.last_ms
        nq = self.nq
        local_key = router.local_key
        n_keys = self.n_keys
        msg_hex = self.msg_prefix_hex
        day_prefix = self.day_prefix
        broken = self.broken_rows
        lo = start_ms + QUIET_AFTER_MS
        span = end_ms - QUIET_BEFORE_MS - lo
        cur = 1.0
        last_sec = -1
        sec_prefix = ""
        count = self.msg_count
        hi_hex = ""
        ct = self.channel_trace
        sizes = self.sizes
        igq_dest = self.igq_dest if self.igq_dest is not None and self.cfg.igq.get(sender) else None
        igq_limit = self.igq_limit
        too_large = self.too_large
        igq_base = n_keys + 3  # accounting connection codes of the IGQ agent's puts, by destination key
        svc_bound = self.svc_bound  # kept across the day's slots: the service holds its handles open all day
        for i in range(n, 0, -1):
            # put time: the n sorted uniform instants, generated in order (Bentley & Saxe)
            cur *= rnd() ** (1.0 / i)
            t = lo + int((1.0 - cur) * span)
            sec = t // 1000
            if sec != last_sec:
                last_sec = sec
                sec_prefix = day_prefix + hms(t)
            count += 1
            if count & 127 == 0 or not hi_hex:
                hi_hex = f"{(count >> 21) & 0x7F:02X}{(count >> 14) & 0x7F:02X}{(count >> 7) & 0x7F:02X}"
            mid = msg_hex + hi_hex + LOW_HEX[count & 127]
            r = rnd()
            if r >= p_special:  # the common case: a not-fixed put by the service application
                qi = qpick[int((r - p_special) * qscale)]
                role = "svc"
                if svc_bound is None:
                    k = route_queue(qi)
                    head = f"{qnames[qi]},,notfixed,{svc_handles[qi]},,false,false,false,"
                    token = svc_token
                    reason = "still most favourable"
                    detail_args = None
                else:
                    self.msg_count = count  # the message's row, for _ended
                    k, head, detail_args = self._svc_bound_put(qi)
                    token, reason = ZERO_TOKEN_HEX, "not re-allocatable: bind on open"
            else:
                self.msg_count = count  # the message's row, for _special
                qi, k, role, head, token, reason, detail_args = self._special(r, p_open, p_group)
            ln = len_lo[qi] + int(rnd() * len_span[qi])
            if sizes is not None:
                ln = sizes(ln)
            pers = 1 if rnd() < pshare[qi] else 0
            waited = None
            seen = obs[k]
            via_igq = False
            if igq_dest is not None and igq_dest[k]:
                if ln <= igq_limit:
                    via_igq = True
                else:
                    too_large += 1
            if via_igq:  # over IGQ: the destination's IGQ agent puts it; no channel, it never waits
                seen = self.obs_igq[k]
                code = ((igq_base + k) * nq + qi) * 2 + pers
                c = cells.get(code)
                if c is None:
                    cells[code] = [1, ln, ln, ln, t]  # and the first arrival
                else:
                    c[0] += 1
                    c[1] += ln
                    if ln < c[2]:
                        c[2] = ln
                    elif ln > c[3]:
                        c[3] = ln
                self.igq_msgs += 1
            elif retrying[k]:
                if router.dests[k].qmgr in self.cfg.retrying:
                    self._hold(k, qi, pers, ln, t, HeldPut(count, role, reason, detail_args))
                else:
                    waited = self._wait(k, qi, pers, ln, reason, t, mid)
            else:
                code = ((k if k != local_key else n_keys + ("svc", "batch", "recon").index(role)) * nq + qi) * 2 + pers
                c = cells.get(code)
                if c is None:
                    cells[code] = [1, ln, ln, ln]
                else:
                    c[0] += 1
                    c[1] += ln
                    if ln < c[2]:
                        c[2] = ln
                    elif ln > c[3]:
                        c[3] = ln
                if first_ms[k] < 0:
                    first_ms[k] = t
                last_ms[k] = t
                if ct is not None and k != local_key:
                    ct.depart(self, k, mid, t, qi, ln, pers)
            idx = count - 1
            rows.append(f"{sec_prefix}{MS_SUFFIX[t - sec * 1000]},{sender},{head}{ln},"
                        f"{'true' if pers else 'false'},{token},{mid},"
                        f"{seen if idx % obs_every == 0 else ',,'}\n")
            if waited is not None and idx % obs_every == 0:
                waited[W_ROW] = len(rows) - 1
            if idx in broken:
                self._broken(idx, rows[-1])
            if len(rows) >= 4096 and not self.eligible_waiting:
                out.write("".join(rows))
                rows.clear()
        self.msg_count = count
        self.too_large = too_large
        self._flush_slot(cells, acct, interval)

    def _svc_bound_put(self, qi: int):
        """A put of the service application bound on open (a planned event): its handle for the queue this day,
        opened (and the destination chosen) by the first put; one whose instance was PUT(DISABLED) since closes."""
        bound = self.svc_bound
        assert bound is not None
        h = bound.get(qi)
        if h is not None and not self._bound_still_open(h[1], qi):
            self._ended(h[0], after=False)
            h = None
        if h is None:
            h = bound[qi] = [self._new_handle("svc"), self.router.route_queue(qi)]
        self.kinds["open"] += 1
        self.zero_tokens += 1
        return h[1], f"{self.qnames[qi]},,open,{h[0]},,false,false,false,", ("open", h[0], b"", 0, False, False)

    def _special(self, r: float, p_open: float, p_group: float):
        """A message of a bind-on-open handle, of a group, or naming its target queue manager."""
        rnd = self.rng.random
        router = self.router
        if r < p_open:  # bind on open: one choice for the handle, zero AccountingToken (002)
            s = self._session()
            qi = s[1]
            if s[2] < 0:
                s[2] = router.route_queue(qi)
            k = s[2]
            s[3] -= 1
            if s[3] <= 0:
                self.sessions.remove(s)
                self._ended(s[0], after=True)
            self.kinds["open"] += 1
            self.zero_tokens += 1
            head = f"{self.qnames[qi]},,open,{s[0]},,false,false,false,"
            return qi, k, "batch", head, ZERO_TOKEN_HEX, "not re-allocatable: bind on open", \
                ("open", s[0], b"", 0, False, False)
        if r < p_group:  # bind on group: with logical order one choice per group and a zero token (002)
            g = self._group()
            qi, logical = g[1], g[5]
            g[3] += 1
            g[4] -= 1
            if g[4] == 0:
                self._ended(g[0], after=True)
                if self.group_last is not None:
                    self.group_last.add(self.msg_count - 1)
            if logical:
                if g[6] < 0:
                    g[6] = router.route_queue(qi)
                k = g[6]
                self.kinds["group_logical"] += 1
                self.zero_tokens += 1
                token, reason = ZERO_TOKEN_HEX, "not re-allocatable: bind on group with logical order"
            else:  # a group the queue manager does not manage: routed message by message, normal token
                k = router.route_queue(qi)
                self.kinds["group_unmanaged"] += 1
                token, reason = self.tokens["batch"], "still most favourable"
            head = (f"{self.qnames[qi]},,group,{g[0]},{g[2].hex().upper()},{'true' if logical else 'false'},"
                    f"false,false,")
            return qi, k, "batch", head, token, reason, ("group", g[0], g[2], g[3], g[4] == 0, logical)
        pairs = router.named_pairs  # the application names the target queue manager: zero token (002)
        if not pairs:
            qi = self.qtable[int(rnd() * len(self.qtable))]
            k = router.route_queue(qi)
            head = f"{self.qnames[qi]},,notfixed,{self.handles['svc'][qi]},,false,false,false,"
            return qi, k, "svc", head, self.tokens["svc"], "still most favourable", None
        qi, target = pairs[int(rnd() * len(pairs))]
        k = router.route_named(target)
        self.kinds["named"] += 1
        self.zero_tokens += 1
        head = f"{self.qnames[qi]},{target},notfixed,{self.handles['recon'][qi]},,false,false,false,"
        return qi, k, "recon", head, ZERO_TOKEN_HEX, "not re-allocatable: target queue manager named", \
            ("named", self.handles["recon"][qi], b"", 0, False, False, target)

    def _hold(self, k, qi, pers, ln, t, put: HeldPut) -> None:
        count, role, reason, detail_args = put
        store = self.held
        assert store is not None, "a message for a retrying channel outside an outage"
        d = self.router.dests[k]

        def detail() -> HeldMessage:
            if detail_args is None:
                bind, handle, gid, gseq, glast, logical, target = "notfixed", self.handles["svc"][qi], b"", 0, \
                    False, False, ""
            elif detail_args[0] == "named":
                bind, handle, gid, gseq, glast, logical, target = "notfixed", *detail_args[1:]
            else:
                bind, handle, gid, gseq, glast, logical = detail_args
                target = ""
            msg_id = self.msg_prefix + seven_bit(count)
            zero = reason.startswith("not re-allocatable")
            return HeldMessage(t, self.qnames[qi], target, d.qmgr, d.channel, self.xmitq[k], bind, handle, gid,
                               gseq, glast, logical, ln, bool(pers), msg_id, role, zero, reason)

        store.add(k, qi, pers, ln, reason, t, detail)
        if self.channel_trace is not None:
            self.held_departures.append((k, (self.msg_prefix + seven_bit(count)).hex().upper(), t, qi, ln, pers))
        self.routed[(qi, k)] = self.routed.get((qi, k), 0) + 1

    def _broken(self, idx: int, row: str) -> None:
        """Extra rows that describe no real message, right after data row ``idx``: each is quarantined."""
        for kind in self.broken_rows[idx]:
            f = row.rstrip("\n").split(",")
            bad_id = bytes.fromhex(f[13])[:20] + seven_bit(0x0FFFFFFF - len(self.broken_written))
            f[13] = bad_id.hex().upper()
            if kind == "bad_hex":
                f[12] = f[12][:-4] + "0G06"
                reason = "bad hex in accounting_token"
            else:
                f[12] = f[12][2:]
                reason = "accounting_token is not 32 bytes"
            line = idx + 2 + len(self.broken_written) + 1  # header, rows 0..idx, earlier broken rows
            self.csv_rows.append(",".join(f) + "\n")
            self.broken_written.append({"kind": kind, "line": line, "expected_reason": reason})

    def _flush_slot(self, cells: dict[int, list[int]], acct: DayAccounting, interval: int) -> None:
        est, router = self.estate, self.router
        nq, n_keys = self.nq, self.n_keys
        sent = [0] * n_keys
        nbytes = [0] * n_keys
        for code, c in cells.items():
            cnt, byt = c[0], c[1]
            pers = code & 1
            rest = code >> 1
            qi, conn = rest % nq, rest // nq
            if conn >= n_keys + 3:  # put by the destination's IGQ agent (SYSTEM.QSG.TRANSMIT.QUEUE): no channel
                k = conn - n_keys - 3
                acct.add(router.dests[k].qmgr, interval, ("igq", self.sender), est.queues[qi].name, pers, c,
                         c[4] + 100)
                self.routed[(qi, k)] = self.routed.get((qi, k), 0) + cnt
                continue
            if conn < n_keys:
                k = conn
                d = router.dests[k]
                conn_id = ("mca", self.sender, d.channel)
            else:
                k = router.local_key
                d = router.dests[k]
                conn_id = ("app", self.apps[("svc", "batch", "recon")[conn - n_keys]].name)
            arrival = self.first_ms[k] + (0 if d.local else 100)
            acct.add(d.qmgr, interval, conn_id, est.queues[qi].name, pers, c, arrival)
            self.routed[(qi, k)] = self.routed.get((qi, k), 0) + cnt
            sent[k] += cnt
            nbytes[k] += byt + (428 * cnt if not d.local else 0)
        for k in range(n_keys):
            if sent[k] == 0:
                continue
            first = self.first_ms[k]
            if self.inst_start[k] < 0 or self.prev_last[k] < 0 or first - self.prev_last[k] > DISCINT * 1000:
                self.inst_start[k] = first
                self.inst_msgs[k] = 0
                self.inst_bytes[k] = 0
            self.inst_msgs[k] += sent[k]
            self.inst_bytes[k] += nbytes[k]
            self.sent_today[k] += sent[k]
            self.first_ms[k] = -1
            self.prev_last[k] = self.last_ms[k]

    # -- outages ----------------------------------------------------------------------------------------
    def start_outage(self, outage: int, browse_ms: int, cap: int) -> None:
        self.held = HeldStore(self.sender, outage, browse_ms, cap)
        self.held_stores.append(self.held)

    def end_outage(self, release_ms: int, acct: DayAccounting) -> HeldStore | None:
        """The channel is back (one second before the capture at ``release_ms``): the backlog is sent at
        once and arrives in the accounting interval that ends at the capture."""
        store, self.held = self.held, None
        if store is None:
            return None
        interval = interval_of(release_ms // 60000) - 1
        router = self.router
        per_key: dict[int, list[int]] = {}
        for (k, qi, pers), counts in sorted(store.counts.items()):
            cnt, byt = counts[0], counts[1]
            d = router.dests[k]
            acct.add(d.qmgr, interval, ("mca", self.sender, d.channel), self.qnames[qi], pers, counts,
                     release_ms - 1000 + 350)
            pk = per_key.setdefault(k, [0, 0])
            pk[0] += cnt
            pk[1] += byt + 428 * cnt
        for k, (cnt, byt) in per_key.items():
            self._channel_restarted(k, release_ms - 1000, cnt, byt)
        if self.channel_trace is not None:  # the backlog leaves in put order
            for k, mid, t, qi, ln, pers in self.held_departures:
                self.channel_trace.release(self, k, mid, t, qi, ln, pers, release_ms - 1000)
            self.held_departures = []
        return store

    def _channel_restarted(self, k: int, back: int, cnt: int, byt: int) -> None:
        """Destination k's channel runs again from ``back`` (ms) and first sends the ``cnt`` messages (``byt``
        bytes) that waited for it: a new channel instance, as its CHSTATUS shows it."""
        self.inst_start[k] = back
        self.inst_msgs[k] = cnt
        self.inst_bytes[k] = byt
        self.sent_today[k] += cnt
        self.last_ms[k] = back + 350
        self.prev_last[k] = back + 350

    def finish(self) -> None:
        if self.csv_rows:
            self.out.write("".join(self.csv_rows))
            self.csv_rows.clear()

"""An independent, plainly written simulation of the CLWL algorithm, and the traffic it routes.

This module is the generator's own reading of ``docs/algorithm.md`` (default profile) with the
points that ``docs/cli-contract.md`` fixes. It deliberately imports nothing from the engine under test
(``clwl.engine.algorithm``, ``clwl.engine.router``, ``clwl.engine.state``, ``clwl.engine.xmitq``): the pipeline agreeing with it must
mean something.

What the simulation assumes (recorded in ``_generate.json`` too):

* Routing state (DestSeqFactor, DestSeqNumber) is per sending queue manager and per channel, shared by
  every queue; the local instance has its own entry. It starts at zero every day (05:00 restart).
* Step 12 adds exactly 1000/CLWLWGHT: factors are integers over a common denominator (the least common
  multiple of every CLWLWGHT in the estate), never floats.
* Ties: lowest DestSeqFactor, then lowest DestSeqNumber, then queue manager name, then channel name.
* DestSeqNumber is the sending queue manager's choice counter (1, 2, 3, ...) when the channel was last
  chosen. The state advances on every choice, whichever step made it (a named target queue manager, the
  local instance by step 3, the first message of a bind-on-open handle or of a logically ordered group).
  Later messages of a bound handle or group make no choice.
* All DestSeqFactors are reset to zero when a workload attribute (CLWLWGHT, CLWLPRTY, CLWLRANK, NETPRTY)
  of a known cluster receiver changes. Not when a channel comes back from RETRYING, not on suspend /
  resume, not when a queue's attributes change.
* Steps 4 and 10 (cluster PCF messages) never apply: put records are application puts. CLWLMRUC is the
  default (999999999), so step 11c keeps everything; it is written out all the same.
* Intra-group queuing (``--qsg``, ``clwl.generate.qsg``) changes the path, never the choice: a message of a
  sending member with IGQ(ENABLED) whose chosen destination is another member and whose length is at most the
  limit goes over SYSTEM.QSG.TRANSMIT.QUEUE (no channel: it neither waits behind a retrying channel nor counts in
  the channel's status); every other message as without it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date

import clwl.generate.qsg as Q
from clwl.generate.estate import (
    ACCTINT,
    DISCINT,
    QMGR_CLWLUSEQ,
    QUIET_AFTER_MS,
    QUIET_BEFORE_MS,
    RESTART_MIN,
    SENDER_WEIGHT,
    ConfigState,
    Estate,
)
from clwl.generate.render_puts import PUTS_CSV_HEADER

ZERO_TOKEN = b"\0" * 32
ZERO_TOKEN_HEX = "0" * 64
SEQ_BITS = 40  # DestSeqNumber < 2**40 choices a day
RANK_BITS = 20  # < 2**20 destinations per sending queue manager
STATE_TIER = {"INACTIVE": 0, "RUNNING": 0, "BINDING": 1, "INITIALIZING": 1, "STARTING": 1, "STOPPING": 1,
              "RETRYING": 2}  # anything else (REQUESTING, PAUSED, STOPPED, ...) is tier 3


@dataclass(frozen=True)
class Dest:
    """A destination the sending queue manager can choose: its local instance (channel "") or a
    cluster-sender channel to a queue manager in one cluster."""

    key: int
    qmgr: str
    channel: str
    cluster: str

    @property
    def local(self) -> bool:
        return self.channel == ""


class SenderRouter:
    """The CLWL algorithm as one sending queue manager runs it, with its routing state.

    ``eligible_*`` run steps 1-11b, which depend only on the configuration (cached until it changes);
    ``choose`` runs 11c and 12 on the routing state and records the choice.
    """

    def __init__(self, estate: Estate, cfg: ConfigState, sender: str, mruc: int = 999_999_999):
        self.estate, self.cfg, self.me = estate, cfg, sender
        self.mruc = mruc
        self.known = set(estate.knows[sender])
        self.my_clusters = set(estate.qmgrs[sender].clusters)
        dests: list[tuple[str, str, str]] = []
        if any(i.host == sender for i in estate.instances):
            dests.append((sender, "", ""))
        for qm in sorted(self.known):
            if qm == sender or estate.qmgrs[qm].repos:
                continue
            for chl, cl in estate.channels_of(qm):
                if cl in self.my_clusters:
                    dests.append((qm, chl, cl))
        self.dests = [Dest(k, qm, chl, cl) for k, (qm, chl, cl) in enumerate(dests)]
        self.by_qmgr: dict[str, list[Dest]] = {}
        for d in self.dests:
            self.by_qmgr.setdefault(d.qmgr, []).append(d)
        self.local_key = self.dests[0].key if self.dests and self.dests[0].local else -1
        order = sorted(self.dests, key=lambda d: (d.qmgr, d.channel))  # the contract's tie order
        self.rank = [0] * len(self.dests)
        for r, d in enumerate(order):
            self.rank[d.key] = r
        n = len(self.dests)
        self.denominator = estate.weight_denominator()
        # routing state
        self.factor = [0] * n  # DestSeqFactor x denominator
        self.seqno = [0] * n  # DestSeqNumber
        self.counter = 0
        self.packed = [self.rank[k] for k in range(n)]  # step 12's ordering as one integer (see choose)
        self.resets = 0
        # derived from the configuration
        self.increment = [0] * n
        self.retrying = [False] * n
        self.queue_cache: list[list[int] | None] = []
        self.named_cache: dict[str, list[int]] = {}
        self.named_pairs: list[tuple[int, str]] = []
        self.epoch = -1
        self.fingerprint: tuple | None = None
        self.sync()

    # -- configuration -----------------------------------------------------------------------------
    def sync(self) -> None:
        """Take the configuration in force (the latest capture) into account; reset factors if a
        cluster receiver's workload attributes changed (step 12, last sentences)."""
        cfg = self.cfg
        if cfg.epoch == self.epoch:
            return
        self.epoch = cfg.epoch
        fp = tuple((qm, cfg.weight[qm], cfg.chl_prty[qm], 0, 0) for qm in sorted(self.known))
        if self.fingerprint is not None and fp != self.fingerprint:
            self.reset_factors()
        self.fingerprint = fp
        for d in self.dests:
            w = SENDER_WEIGHT if d.local else cfg.weight[d.qmgr]
            self.increment[d.key] = 1000 * self.denominator // w  # exactly 1000/CLWLWGHT, scaled
            self.retrying[d.key] = d.qmgr in cfg.retrying or (self.me, d.qmgr) in cfg.partitioned
        self.queue_cache = [None] * len(self.estate.queues)
        self.named_cache = {}
        self.named_pairs = [(q.index, h) for q in self.estate.queues for h in q.hosts
                            if h != self.me and h in self.known and cfg.put_enabled(q.name, h)]

    def reset_factors(self) -> None:
        for k in range(len(self.factor)):
            self.factor[k] = 0
            self.packed[k] = self._pack(k)
        self.resets += 1

    def channel_tier(self, d: Dest) -> int:
        if d.local:
            return 0  # the local instance has no channel: it counts with the best tier (reading 2)
        retrying = d.qmgr in self.cfg.retrying or (self.me, d.qmgr) in self.cfg.partitioned
        return STATE_TIER.get("RETRYING" if retrying else "RUNNING", 3)

    # -- steps 1 to 11b ----------------------------------------------------------------------------
    def eligible_queue(self, qi: int) -> list[int]:
        """Keys left by steps 1-11b for a put to a cluster queue (no queue manager named)."""
        est, cfg = self.estate, self.cfg
        queue = est.queues[qi]
        # Step 1: queues not PUT enabled are eliminated; remote instances not sharing a cluster with the
        # local queue manager are eliminated; channels not in the queue's cluster are eliminated.
        insts = [est.instance(queue.name, h) for h in queue.hosts if h in self.known]
        insts = [i for i in insts if cfg.put_enabled(i.queue, i.host)]
        insts = [i for i in insts if i.host == self.me or i.cluster in self.my_clusters]
        cands: list[tuple[Dest, object]] = []
        for i in insts:
            if i.host == self.me:
                cands.append((self.dests[self.local_key], i))
            else:
                cands += [(d, i) for d in self.by_qmgr.get(i.host, []) if d.cluster == i.cluster]
        # Step 3: the local instance is chosen if its CLWLUSEQ resolves to LOCAL (queue QMGR -> the queue
        # manager's CLWLUSEQ, LOCAL in this estate); a message put locally with CLWLUSEQ(ANY) competes.
        local = [(d, i) for d, i in cands if d.local]
        if local:
            useq = local[0][1].clwluseq
            if useq == "QMGR":
                useq = QMGR_CLWLUSEQ
            if useq == "LOCAL":
                return [local[0][0].key]
        return self._common_steps(cands, choosing_qmgr=False)

    def eligible_named(self, target: str) -> list[int]:
        """Keys left by steps 2-11a for a put that names the target queue manager."""
        # Step 2: a queue manager name is specified: (no queue manager aliases in this estate) channels not in
        # the same cluster as the local queue manager are eliminated.
        cands = [(d, None) for d in self.by_qmgr.get(target, []) if d.cluster in self.my_clusters]
        return self._common_steps(cands, choosing_qmgr=True)

    def _common_steps(self, cands: list, choosing_qmgr: bool) -> list[int]:
        cfg = self.cfg
        # Step 4 (cluster PCF message): never, application puts only.
        # Step 4a: channels with a CLWLRANK below the highest remaining channel's are eliminated (every
        # CLWLRANK is 0 in this estate); the local instance is not a channel (reading 2).
        cands = _keep_highest(cands, lambda c: 0, lambda c: not c[0].local)
        # Step 4b: queues with a CLWLRANK below the highest are eliminated (queue being chosen only).
        if not choosing_qmgr:
            cands = _keep_highest(cands, lambda c: 0, lambda c: c[1] is not None)
        # Step 5: if only remote instances remain, resumed queue managers are preferred (reading 3).
        if not any(d.local for d, _ in cands):
            resumed = [c for c in cands if c[0].qmgr not in cfg.suspended]
            if resumed:
                cands = resumed
        # Steps 6-9: channel state tiers, the first tier that keeps something (reading 1).
        if len(cands) > 1:
            best = min(self.channel_tier(d) for d, _ in cands)
            cands = [c for c in cands if self.channel_tier(c[0]) == best]
        # Step 10 (cluster PCF message): never.
        # Step 11: for each queue manager, the channels with the highest NETPRTY (0 everywhere here).
        if len(cands) > 1:
            cands = _keep_highest(cands, lambda c: 0, lambda c: not c[0].local)
        # Step 11a: channels other than those with the highest CLWLPRTY are eliminated (reading 4: also
        # when a queue is chosen); the local instance is not a channel.
        if len(cands) > 1:
            cands = _keep_highest(cands, lambda c: cfg.chl_prty[c[0].qmgr], lambda c: not c[0].local)
        # Step 11b: queues other than those with the highest CLWLPRTY are eliminated.
        if len(cands) > 1 and not choosing_qmgr:
            cands = _keep_highest(cands, lambda c: cfg.q_prty[(c[1].queue, c[1].host)], lambda c: True)
        return [d.key for d, _ in cands]

    # -- steps 11c and 12: the routing state -----------------------------------------------------------
    def _pack(self, k: int) -> int:
        """Step 12's order as one integer: DestSeqFactor, then DestSeqNumber, then (queue manager name,
        channel name) rank. Lower is chosen first."""
        return (((self.factor[k] << SEQ_BITS) | self.seqno[k]) << RANK_BITS) | self.rank[k]

    def choose(self, keys: list[int]) -> int:
        """Steps 11c and 12 on the remaining keys; records the choice and returns its key."""
        # Step 11c: keep no more than CLWLMRUC channels, those most recently used (highest DestSeqNumber).
        if len(keys) > self.mruc:
            keys = self.most_recently_used(keys)
        # Step 12: the least recently used: lowest DestSeqFactor, then lowest DestSeqNumber, then names.
        k = keys[0] if len(keys) == 1 else min(keys, key=self.packed.__getitem__)
        self.record(k)
        return k

    def most_recently_used(self, keys: list[int]) -> list[int]:
        channels = [k for k in keys if k != self.local_key]
        if len(channels) <= self.mruc:
            return keys
        by_recency = sorted(channels, key=lambda k: (-self.seqno[k], self.rank[k]))
        keep = set(by_recency[: self.mruc])
        return [k for k in keys if k == self.local_key or k in keep]

    def choose_plainly(self, keys: list[int]) -> int:
        """The same choice as ``choose`` with step 12 written as a tuple comparison (for the tests)."""
        def order(k: int) -> tuple:
            d = self.dests[k]
            return self.factor[k], self.seqno[k], d.qmgr, d.channel
        k = min(keys, key=order)
        self.record(k)
        return k

    def record(self, k: int) -> None:
        """The choice: its DestSeqFactor grows by 1000/CLWLWGHT, its DestSeqNumber is the counter."""
        self.counter = c = self.counter + 1
        self.factor[k] = f = self.factor[k] + self.increment[k]
        self.seqno[k] = c
        self.packed[k] = (((f << SEQ_BITS) | c) << RANK_BITS) | self.rank[k]  # as _pack(k)

    def peek(self, keys: list[int]) -> int:
        """What steps 11c and 12 would choose now, without recording a choice (re-allocation re-drives a
        waiting message; it is not a new put and does not advance the rotation)."""
        if len(keys) > self.mruc:
            keys = self.most_recently_used(keys)
        return keys[0] if len(keys) == 1 else min(keys, key=self.packed.__getitem__)

    def queue_keys(self, qi: int) -> list[int]:
        keys = self.queue_cache[qi]
        if keys is None:
            keys = self.queue_cache[qi] = self.eligible_queue(qi)
        return keys

    def route_queue(self, qi: int) -> int:
        keys = self.queue_cache[qi]
        if keys is None:
            keys = self.queue_cache[qi] = self.eligible_queue(qi)
        return self.choose(keys)

    def route_named(self, target: str) -> int:
        keys = self.named_cache.get(target)
        if keys is None:
            keys = self.named_cache[target] = self.eligible_named(target)
        return self.choose(keys)

    def state(self) -> dict[str, tuple[float, int]]:
        return {f"{d.qmgr}/{d.channel or 'local'}": (self.factor[d.key] / self.denominator, self.seqno[d.key])
                for d in self.dests}


def _keep_highest(cands: list, value, among) -> list:
    """Keep the candidates that ``among`` does not cover, and of those it covers the ones with the highest
    ``value``."""
    scored = [c for c in cands if among(c)]
    if not scored:
        return cands
    top = max(value(c) for c in scored)
    return [c for c in cands if not among(c) or value(c) == top]


# --------------------------------------------------------------------------------------------------
# Message ids and times


def seven_bit(n: int) -> bytes:
    """Four bytes below 0x80 (an amqsbcg character column stays one byte per character)."""
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])


def id_prefix(qm: str, day_index: int, kind: int) -> bytes:
    """'AMQ ' + queue manager name (12) + 4 bytes for the day and the kind of id."""
    return b"AMQ " + qm.ljust(12).encode() + bytes([0x5A, (day_index >> 7) & 0x7F, day_index & 0x7F, 0x40 + kind])


MS_SUFFIX = [f".{i:03d}Z" for i in range(1000)]
LOW_HEX = [f"{i:02X}" for i in range(128)]


def hms(ms: int) -> str:
    s = ms // 1000
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


# --------------------------------------------------------------------------------------------------
# What the simulation hands over: held messages, accounting counters


@dataclass
class HeldMessage:
    """A message kept on a transmission queue behind a RETRYING channel (for the browses)."""

    t_ms: int
    queue: str
    target: str
    dest: str
    channel: str
    xmitq: str
    bind: str
    handle: str
    group_id: bytes
    group_seq: int
    group_last: bool
    logical: bool
    length: int
    persistent: bool
    msg_id: bytes
    app_role: str
    zero: bool
    reason: str


class HeldStore:
    """Messages held behind one outage, for one sending queue manager: exact counters, and the first
    ``cap`` messages in full (for the browse)."""

    def __init__(self, sender: str, outage: int, browse_ms: int, cap: int):
        self.sender, self.outage, self.browse_ms, self.cap = sender, outage, browse_ms, cap
        self.counts: dict[tuple[int, int, int], list[int]] = {}  # (key, queue index, persistent) -> n, bytes, min, max
        self.reasons: dict[str, int] = {}
        self.kept: list[HeldMessage] = []
        self.at_browse = 0  # held messages put before the browse
        self.total = 0

    def add(self, key: int, qi: int, pers: int, length: int, reason: str, t_ms: int, detail) -> None:
        c = self.counts.get((key, qi, pers))
        if c is None:
            self.counts[(key, qi, pers)] = [1, length, length, length]
        else:
            c[0] += 1
            c[1] += length
            c[2] = min(c[2], length)
            c[3] = max(c[3], length)
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        self.total += 1
        if t_ms < self.browse_ms:
            self.at_browse += 1
            if len(self.kept) < self.cap:
                self.kept.append(detail())


class DayAccounting:
    """Queue accounting counters of one day: (receiver, interval, connection, queue) -> counters.

    Counters: [count non-persistent, count persistent, bytes np, bytes p, min np, max np, min p, max p].
    """

    def __init__(self):
        self.cells: dict[tuple, list[int]] = {}
        self.first_arrival: dict[tuple[str, tuple], int] = {}  # (receiver, connection) -> ms of day

    def add(self, receiver: str, interval: int, conn: tuple, queue: str, pers: int, n: int, nbytes: int,
            mn: int, mx: int, arrival_ms: int) -> None:
        fk = (receiver, conn)
        if arrival_ms < self.first_arrival.get(fk, 1 << 62):
            self.first_arrival[fk] = arrival_ms
        key = (receiver, interval, conn, queue)
        c = self.cells.get(key)
        if c is None:
            c = self.cells[key] = [0, 0, 0, 0, 0, 0, 0, 0]
        c[pers] += n
        c[2 + pers] += nbytes
        if c[4 + 2 * pers] == 0 or mn < c[4 + 2 * pers]:
            c[4 + 2 * pers] = mn
        c[5 + 2 * pers] = max(c[5 + 2 * pers], mx)


def interval_of(minute_of_day: int) -> int:
    """Accounting interval index (ACCTINT from the 05:00 restart) of a minute of the day."""
    return (minute_of_day - RESTART_MIN) * 60 // ACCTINT


# --------------------------------------------------------------------------------------------------
# One sending queue manager's traffic on one day


@dataclass
class Shares:
    bind_open: float
    bind_group: float
    named: float
    group_logical: float = 0.85


# a message waiting behind a channel of a partition: [msg_id hex, queue index, persistent, length, put ms,
# eligible for re-allocation, first key, row in csv_rows (-1: no observed columns), re-allocations, ms of the
# last re-allocation]
W_QI, W_ELIGIBLE, W_ROW, W_REALLOC, W_AT = 1, 5, 7, 8, 9


class SenderDay:
    """Generates, routes and writes (puts.csv) one sending queue manager's messages of one day."""

    MAX_SESSIONS = 4

    def __init__(self, estate: Estate, cfg: ConfigState, sender: str, day: date, day_index: int, shares: Shares,
                 csv_out, observed_every: int, broken_rows: dict[int, list[str]] | None = None,
                 channel_trace=None):
        self.estate, self.cfg, self.sender, self.day, self.di = estate, cfg, sender, day, day_index
        self.rng = random.Random(f"clwl-generate/{estate.seed}/traffic/{sender}/{day.isoformat()}")
        self.router = SenderRouter(estate, cfg, sender)
        self.shares = shares
        self.out = csv_out
        self.observed_every = max(1, observed_every)
        self.broken_rows = broken_rows or {}
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
        self.channel_trace = channel_trace
        self.held_departures: list[tuple[int, str, int, int, int, int]] = []
        # an output that prints handles (the activity trace) is told where each ends, handle_ends: 2 x data row
        # (closed before that row's put) or 2 x row + 1 (after it) -> handles; and the rows that are the last
        # message of their group (group_last)
        self.handle_ends: dict[int, list[str]] | None = getattr(csv_out, "handle_ends", None)
        self.group_last: set[int] | None = getattr(csv_out, "group_last", None)
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
                k = route_queue(qi)
                role = "svc"
                head = f"{qnames[qi]},,notfixed,{svc_handles[qi]},,false,false,false,"
                token = svc_token
                reason = "still most favourable"
                detail_args = None
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
                    self._hold(k, qi, pers, ln, reason, t, count, role, detail_args)
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

    def _hold(self, k, qi, pers, ln, reason, t, count, role, detail_args) -> None:
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

    # -- partitions: messages that wait, re-allocation ----------------------------------------------------
    def _wait(self, k, qi, pers, ln, reason, t, mid) -> list:
        """A message routed to a channel of a partition (RETRYING while the other candidates are too): it
        waits on the transmission queue."""
        eligible = not reason.startswith("not re-allocatable")
        w = [mid, qi, pers, ln, t, eligible, k, -1, 0, -1]
        self.waiting.setdefault(k, []).append(w)
        if eligible:
            self.eligible_waiting += 1
        return w

    def partition_step(self, at_ms: int, captured: bool, acct: DayAccounting) -> None:
        """At a capture instant (after the changes): messages behind a channel that runs again are
        delivered; if the sending queue manager is captured here (the capture shows a failed retry of each
        channel still RETRYING), the eligible messages waiting behind a still-retrying channel are re-driven
        (steps 1-12 without advancing the rotation): they move unless their channel is still the most
        favourable; the others (zero AccountingToken) stay."""
        if not self.waiting:
            return
        router = self.router
        retrying = router.retrying
        deliver: dict[int, list[list]] = {}
        for k in sorted(self.waiting):
            if not retrying[k]:
                deliver.setdefault(k, []).extend(self.waiting.pop(k))
        if captured:
            moved: dict[int, list[list]] = {}
            for k in sorted(self.waiting):
                stay = []
                for w in self.waiting[k]:
                    if not w[W_ELIGIBLE]:
                        stay.append(w)
                        continue
                    keys = router.queue_keys(w[W_QI])
                    k2 = router.peek(keys) if keys else k
                    if k2 == k:
                        stay.append(w)
                        continue
                    w[W_REALLOC] += 1
                    w[W_AT] = at_ms
                    if retrying[k2]:
                        moved.setdefault(k2, []).append(w)
                    else:
                        deliver.setdefault(k2, []).append(w)
                self.waiting[k] = stay
            for k2, ws in moved.items():
                self.waiting.setdefault(k2, []).extend(ws)
        self.waiting = {k: ws for k, ws in self.waiting.items() if ws}
        if deliver:
            self._deliver(deliver, at_ms, acct)

    def _deliver(self, deliver: dict[int, list[list]], release_ms: int, acct: DayAccounting) -> None:
        """Delivered one second before the capture at ``release_ms`` (the channel came back, or the message
        was re-allocated at the failed retry the capture shows), in the interval that ends there."""
        interval = interval_of(release_ms // 60000) - 1
        router = self.router
        rows = self.csv_rows
        back = release_ms - 1000
        base = self.day_prefix
        for k in sorted(deliver):
            d = router.dests[k]
            cnt = byt = 0
            for w in deliver[k]:
                mid, qi, pers, ln, t, eligible, first, row, reallocs, at = w
                if self.channel_trace is not None:
                    self.channel_trace.release(self, k, mid, t, qi, ln, pers, back)
                acct.add(d.qmgr, interval, ("mca", self.sender, d.channel), self.qnames[qi], pers, 1, ln, ln, ln,
                         back + 350)
                self.routed[(qi, k)] = self.routed.get((qi, k), 0) + 1
                cnt += 1
                byt += ln + 428
                if eligible:
                    self.eligible_waiting -= 1
                if reallocs:
                    f = router.dests[first]
                    if row >= 0 and k != first:
                        text = rows[row]
                        rows[row] = text[:len(text) - len(self.obs[first]) - 1] + self.obs[k] + "\n"
                        at_put = getattr(self.out, "at_put", None)  # an activity trace records the put's choice
                        if at_put is not None:
                            qmgr, _channel, xmitq = self.obs[first].split(",")
                            at_put[mid] = (qmgr, xmitq or None)
                    self.reallocated.append({
                        "msg_id": mid, "sender": self.sender, "queue": self.qnames[qi],
                        "put_time": base + hms(t) + MS_SUFFIX[t % 1000],
                        "first_qmgr": f.qmgr, "first_channel": f.channel,
                        "final_qmgr": d.qmgr, "final_channel": d.channel, "reallocations": reallocs,
                        "reallocated_at": base + hms(at - 1000) + MS_SUFFIX[0]})
            self.partition_delivered += cnt
            self._channel_restarted(k, back, cnt, byt)
        if not self.eligible_waiting and len(rows) >= 4096:
            self.out.write("".join(rows))
            rows.clear()

    def waiting_on(self, k: int) -> int:
        return len(self.waiting.get(k, ()))

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
            cnt, byt, mn, mx = c[0], c[1], c[2], c[3]
            pers = code & 1
            rest = code >> 1
            qi, conn = rest % nq, rest // nq
            if conn >= n_keys + 3:  # put by the destination's IGQ agent (SYSTEM.QSG.TRANSMIT.QUEUE): no channel
                k = conn - n_keys - 3
                acct.add(router.dests[k].qmgr, interval, ("igq", self.sender), est.queues[qi].name, pers, cnt, byt,
                         mn, mx, c[4] + 100)
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
            acct.add(d.qmgr, interval, conn_id, est.queues[qi].name, pers, cnt, byt, mn, mx, arrival)
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
        for (k, qi, pers), (cnt, byt, mn, mx) in sorted(store.counts.items()):
            d = router.dests[k]
            acct.add(d.qmgr, interval, ("mca", self.sender, d.channel), self.qnames[qi], pers, cnt, byt, mn, mx,
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

"""An independent, plainly written simulation of the CLWL algorithm: one sending queue manager's choices.

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

The traffic it routes is ``simulate``'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from clwl.generate.estate import QMGR_CLWLUSEQ, SENDER_WEIGHT, ConfigState, Estate

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

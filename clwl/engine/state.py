"""Routing state of one sending queue manager: MQWDR.DestSeqFactor and MQWDR.DestSeqNumber per destination.

The state is per sending queue manager and per channel, shared by every queue routed over that channel
(docs/algorithm.md, pitfall 4: "CLWLWGHT is per channel and shared by every queue over it").

Exact arithmetic: step 12 adds ``1000 / CLWLWGHT`` as a real number (cli-contract). Floats would turn true
ties (3 x 1000/30 == 1000/10) into false orderings, so factors are kept as integers over a common
denominator ``denom`` (the least common multiple of the weights seen): factor = numerator / denom.
"""

from __future__ import annotations

from fractions import Fraction
from math import lcm

from clwl.engine.model import ClusterView

# The local instance has no channel; it keeps its own state under this key (docs/algorithm.md reading 2).
LOCAL_KEY = ""


class RoutingState:
    __slots__ = ("counter", "numerators", "seq", "denom", "fingerprint", "pcf_sent", "resets", "epoch")

    def __init__(self) -> None:
        self.counter = 0  # the sending queue manager's choice counter: 1, 2, 3, ...
        self.numerators: dict[str, int] = {}  # DestSeqFactor * denom
        self.seq: dict[str, int] = {}  # DestSeqNumber: counter value when last chosen, 0 if never
        self.denom = 1
        self.fingerprint: dict[str, tuple] | None = None
        self.pcf_sent: set[str] = set()  # queue managers already sent a cluster PCF message (step 4)
        self.resets = 0
        self.epoch = 0  # bumped whenever factors go down (a reset): cached orderings are void then

    # -- reading ---------------------------------------------------------------------------------------
    def factor(self, key: str) -> Fraction:
        return Fraction(self.numerators.get(key, 0), self.denom)

    def seq_number(self, key: str) -> int:
        return self.seq.get(key, 0)

    def sort_key(self, key: str) -> tuple[int, int]:
        """Step 12's order of destinations: lowest DestSeqFactor, then lowest DestSeqNumber (ties then go by
        ``Candidate.tie_key``)."""
        return self.numerators.get(key, 0), self.seq.get(key, 0)

    # -- the update of step 12 --------------------------------------------------------------------------
    def increment(self, weight: int) -> int:
        """Numerator of 1000/weight in the current denominator, widening the denominator if needed."""
        if self.denom % weight:
            new = lcm(self.denom, weight)
            scale = new // self.denom
            for k in self.numerators:
                self.numerators[k] *= scale
            self.denom = new
            self.epoch += 1
        return 1000 * self.denom // weight

    def record_choice(self, key: str, weight: int) -> None:
        """The queue manager chose ``key``: it becomes the most recently used and its factor grows."""
        inc = self.increment(weight)
        self.counter += 1
        self.seq[key] = self.counter
        self.numerators[key] = self.numerators.get(key, 0) + inc

    # -- resets ------------------------------------------------------------------------------------------
    def observe(self, view: ClusterView) -> bool:
        """Take note of the configuration in force; reset every DestSeqFactor to zero when the workload
        attributes of a destination's CLUSRCVR were altered or a new destination became available
        (reference step 12). Returns True when it reset.

        Attributes of manually defined CLUSSDR channels that the target has not yet replaced with its
        CLUSRCVR values (DEFTYPE CLUSSDR) do not count: "Modifications to workload attributes of
        manually-defined CLUSSDR channels do not reset the Destination Sequence Factor". DestSeqNumbers are
        not reset: the reference resets only the factors.
        """
        fp = workload_fingerprint(view)
        old = self.fingerprint
        self.fingerprint = fp
        if old is None:
            return False
        changed = any(k not in old or old[k] != v for k, v in fp.items())
        if changed:
            self.reset_factors()
        return changed

    def reset_factors(self) -> None:
        for k in self.numerators:
            self.numerators[k] = 0
        self.resets += 1
        self.epoch += 1

    def snapshot(self) -> dict[str, tuple[float, int]]:
        keys = set(self.numerators) | set(self.seq)
        return {k: (float(self.factor(k)), self.seq_number(k)) for k in sorted(keys)}


def workload_fingerprint(view: ClusterView) -> dict[str, tuple]:
    fp: dict[str, tuple] = {}
    for c in view.channels:
        if c.deftype == "CLUSSDR":
            continue
        fp[c.name] = (c.qmgr, c.clwlrank, c.clwlprty, c.clwlwght, c.netprty)
    for r in view.local_receivers:
        fp["(local)" + r.name] = (r.qmgr, r.clwlrank, r.clwlprty, r.clwlwght, r.netprty)
    return fp

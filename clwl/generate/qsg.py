"""``clwl generate --qsg N``: a queue-sharing group of z/OS queue managers with intra-group queuing (IGQ).

Which queue managers are members, their IGQ setting, the coupling-facility structure that holds the shared
transmission queue SYSTEM.QSG.TRANSMIT.QUEUE, the largest message IGQ carries, and the mix of message lengths
around that limit. The generator's own reading of IBM's "Clustering with intra-group queuing" (docs/algorithm.md,
intra-group queuing): it imports nothing from the engine under test.

The rule the simulation follows (and the ground truth records), message by message:

* the destination is chosen exactly as without IGQ (the algorithm and its round-robin state do not change);
* the message goes over IGQ (transmission queue SYSTEM.QSG.TRANSMIT.QUEUE, no channel) when the sending queue
  manager is a member with IGQ(ENABLED) at the put, the chosen destination is another member of the group, and
  the message's length is at most the limit; otherwise as before (the local instance, or the cluster-sender
  channel and its transmission queue). The receiving member's own IGQ setting does not matter;
* the limit is the smaller of the structure's largest message (CFLEVEL 1-3: 63 KB = 64,512 bytes; CFLEVEL 4
  and 5: 100 MB = 104,857,600 bytes, the part above 63 KB offloaded to Db2 or, with OFFLOAD(SMDS), to shared
  message data sets) and the queue's MAXMSGL, less the 428-byte transmission queue header (MQXQH).

Members are named as z/OS queue managers are (1 to 4 characters). Sending queue managers come first (up to half
of the group), then back ends that host instances, alternately by name so that queues have instances inside and
outside the group; at least one hosting back end stays outside. IGQ: the first sending member ENABLED, the second
DISABLED, further ones alternately; every back-end member ENABLED except the last (DISABLED: the receiver's
setting plays no part).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

QSG_NAME = "QSG1"
QSG_XMITQ = "SYSTEM.QSG.TRANSMIT.QUEUE"
QSG_STRUCTURE = "CSQSYSAPPL"  # where IBM's sample definitions (CSQ4INSS) put the shared transmission queue
OTHER_STRUCTURE = "APPL1"  # an application structure the captures show too (CFLEVEL 5, SMDS): not the one IGQ uses
MQXQH_LENGTH = 428
SMALL_STRUCTURE_MAX = 64_512  # CFLEVEL 1-3: 63 KB
LARGE_STRUCTURE_MAX = 104_857_600  # CFLEVEL 4-5: 100 MB with offload
CLUSTER_MAX = 4_194_304 - MQXQH_LENGTH  # the largest message every distributed queue manager and channel takes
ZOS_VERSION = "09030000"
ZOS_NAME_MAX = 4


def structure_max(cflevel: int) -> int:
    return SMALL_STRUCTURE_MAX if cflevel <= 3 else LARGE_STRUCTURE_MAX


def offload_of(cflevel: int) -> str:
    """What DISPLAY CFSTRUCT shows as OFFLOAD: SMDS at CFLEVEL(5); Db2 (the only place) at CFLEVEL(4); none below."""
    return {5: "SMDS", 4: "DB2"}.get(cflevel, "")


@dataclass(frozen=True)
class QsgPlan:
    name: str
    members: tuple[str, ...]  # name order
    igq: tuple[tuple[str, bool], ...]  # (member, IGQ ENABLED) at the start of the estate
    cflevel: int
    maxmsgl: int  # MAXMSGL of SYSTEM.QSG.TRANSMIT.QUEUE

    @property
    def structure_max(self) -> int:
        return structure_max(self.cflevel)

    @property
    def offload(self) -> str:
        return offload_of(self.cflevel)

    @property
    def limit(self) -> int:
        """The largest message (application data) that goes over IGQ."""
        return min(self.structure_max, self.maxmsgl) - MQXQH_LENGTH

    @property
    def limit_from(self) -> str:
        if self.maxmsgl < self.structure_max:
            return f"MAXMSGL({self.maxmsgl}) of {QSG_XMITQ} less the {MQXQH_LENGTH}-byte MQXQH"
        return (f"CFLEVEL({self.cflevel}) structure {QSG_STRUCTURE}: {self.structure_max} bytes less the "
                f"{MQXQH_LENGTH}-byte MQXQH")

    def to_json(self, senders: list[str]) -> dict:
        return {"name": self.name, "members": list(self.members),
                "sending_members": [m for m in self.members if m in senders],
                "igq_at_start": {m: ("ENABLED" if on else "DISABLED") for m, on in self.igq},
                "structure": {"name": QSG_STRUCTURE, "cflevel": self.cflevel, "offload": self.offload or None,
                              "largest_message": self.structure_max},
                "shared_xmitq": {"name": QSG_XMITQ, "maxmsgl": self.maxmsgl, "cfstruct": QSG_STRUCTURE},
                "igq_max_message": self.limit, "limit_from": self.limit_from}


class QsgError(ValueError):
    """The options do not describe a possible queue-sharing group (the estate raises it as its EstateError)."""


def choose_members(n: int, senders: list[str], backends: list[str], hosting: set[str]) -> tuple[str, ...]:
    if n < 2:
        raise QsgError("--qsg needs at least 2 queue managers (a group of one has no one to queue to)")
    n_send = min(len(senders), max(1, n // 2))
    host_b = [b for b in backends if b in hosting]
    ordered = host_b[0::2] + host_b[1::2]
    candidates = ordered[:max(0, len(host_b) - 1)] + [b for b in backends if b not in hosting]
    n_back = n - n_send
    if n_back > len(candidates):
        raise QsgError(f"--qsg {n}: the group takes up to {n_send} sending queue managers and {len(candidates)} "
                       f"back ends (one back end that hosts instances stays outside the group); use --qsg "
                       f"{n_send + len(candidates)} or fewer, or more --qmgrs")
    members = sorted(senders[:n_send] + candidates[:n_back])
    long = [m for m in members if len(m) > ZOS_NAME_MAX]
    if long:
        raise QsgError(f"--qsg: z/OS queue manager names have at most {ZOS_NAME_MAX} characters ({long[0]}); use "
                       f"--qmgrs 99 or fewer")
    return tuple(members)


def initial_igq(members: tuple[str, ...], senders: list[str]) -> tuple[tuple[str, bool], ...]:
    sending = [m for m in members if m in senders]
    backs = [m for m in members if m not in senders]
    on = {m: i % 2 == 0 for i, m in enumerate(sending)}
    on.update({m: i < len(backs) - 1 for i, m in enumerate(backs)})
    return tuple((m, on[m]) for m in members)


def plan(o, senders: list[str], backends: list[str], hosting: set[str]) -> QsgPlan:
    cflevel = getattr(o, "qsg_cflevel", 3)
    if not 1 <= cflevel <= 5:
        raise QsgError(f"--qsg-cflevel {cflevel}: a CFLEVEL is 1 to 5")
    maxmsgl = getattr(o, "qsg_maxmsgl", None)
    if maxmsgl is None:
        maxmsgl = structure_max(cflevel)
    if not MQXQH_LENGTH < maxmsgl <= LARGE_STRUCTURE_MAX:
        raise QsgError(f"--qsg-maxmsgl {maxmsgl}: more than the {MQXQH_LENGTH}-byte MQXQH and at most "
                       f"{LARGE_STRUCTURE_MAX}")
    members = choose_members(o.qsg, senders, backends, hosting)
    return QsgPlan(QSG_NAME, members, initial_igq(members, senders), cflevel, maxmsgl)


class SizeMix:
    """Message lengths around the IGQ limit L, from a random stream of their own (the simulation's other draws
    are those of the estate without the mix): 74 % the queue's usual small length, 10 % just under L (up to 2 KB
    less), 1 % exactly L, 1 % L + 1, 9 % just over (up to 2 KB more), 5 % far over (2 L to 16 L). Nothing is
    longer than CLUSTER_MAX (the distributed queue managers' and channels' MAXMSGL less the MQXQH): where L is too
    close to it for a size over L, the draw is a large message under L instead (L / 2 to L)."""

    def __init__(self, rng: random.Random, limit: int):
        self.rnd = rng.random
        self.randint = rng.randint
        self.limit = limit
        top = min(limit, CLUSTER_MAX)
        self.under = (max(1, top - 2048), top)
        self.large = (max(1, top // 2), top)
        self.over_one = limit + 1 <= CLUSTER_MAX
        self.just_over = (limit + 1, min(limit + 2048, CLUSTER_MAX))
        self.far_over = (2 * limit, min(16 * limit, CLUSTER_MAX)) if 2 * limit <= CLUSTER_MAX else None

    def __call__(self, usual: int) -> int:
        r = self.rnd()
        if r < 0.74:
            return usual
        if r < 0.84:
            return self.randint(*self.under)
        if r < 0.85:
            return min(self.limit, CLUSTER_MAX)
        if r < 0.86:
            return self.limit + 1 if self.over_one else self.randint(*self.large)
        if r < 0.95:
            return self.randint(*self.just_over) if self.over_one else self.randint(*self.large)
        return self.randint(*self.far_over) if self.far_over else self.randint(*self.large)

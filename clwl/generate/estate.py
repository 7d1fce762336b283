"""The synthetic estate: queue managers, clusters, cluster queues and their instances, applications, the
schedule of events (outages, suspends, weight / priority changes, PUT(DISABLED)), capture times, and the
configuration state those events change.

Everything here is decided up front from the seed, by ``build`` (``random.Random`` seeded with strings, so neither
``PYTHONHASHSEED`` nor dict/set order matters). Nothing here knows about messages; ``simulate`` routes them
and ``render`` prints what the queue managers would show.

Time rules (the same as ``samples/``):

* Every queue manager restarts at 05:00 each day, so routing state starts at zero every day; accounting
  intervals (ACCTINT 1800) run from 05:00, on the :00 and :30 marks.
* Application traffic runs from 06:00 to 22:00, cut into 30-minute slots.
* Every configuration or channel-state change happens one second before a slot boundary, and every
  sending queue manager is captured (config + chstatus) at that boundary. No message is put within two
  seconds before or one second after any boundary. So a replay that takes the state from the latest
  capture before each message sees exactly the state the simulation used.
* No change of any kind happens while a channel is RETRYING (outages never overlap each other or any other
  change): a message held behind a retrying channel meets, at every re-allocation attempt, the very same
  candidates it met when it was put.
* Partitions (``--partitions``, off by default, their own random stream) are the exception on purpose: one
  sending queue manager's channels to every host of one queue go RETRYING together, so eligible messages for
  that queue wait; at a capture one host comes back while the others still retry, and the eligible waiting
  messages are re-allocated to it. Nothing else changes around a partition and no other capture of the
  sending queue managers falls inside it (see ``build._schedule_partitions``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from math import lcm

import clwl.generate.qsg as Q

ACCTINT = 1800  # seconds
DISCINT = 6000  # seconds
SHORTRTY, SHORTTMR, LONGRTY, LONGTMR = 10, 60, 999999999, 600
RESTART_MIN = 5 * 60  # 05:00 nightly restart
BASE_CAPTURE_MIN = 5 * 60 + 30  # 05:30 every queue manager is captured
TRAFFIC_START_MIN = 6 * 60
TRAFFIC_END_MIN = 22 * 60
SLOT_MIN = 30
REGULAR_SENDER_CAPTURES = (5 * 60 + 30, 12 * 60, 18 * 60)
QUIET_BEFORE_MS = 2000  # no puts in [boundary - 2 s, boundary + 1 s)
QUIET_AFTER_MS = 1000
CHANGE_LEAD_S = 1  # a change happens 1 s before the capture that shows it
WEIGHTS = (20, 25, 40, 50, 60, 75, 80, 90)  # CLWLWGHT values the estate uses
SENDER_WEIGHT = 50
QMGR_CLWLUSEQ = "LOCAL"  # DISPLAY QMGR CLWLUSEQ of every queue manager
FR_NAMES = ("FR1", "FR2")
QUEUE_WORDS = ("ORDERS", "BILLING", "PAYMENTS", "AUDIT", "INVENTORY", "SHIPPING", "CLAIMS", "QUOTES",
               "LEDGER", "NOTIFY", "PRICING", "RETURNS")
VERSIONS = ("09040200", "09030000", "09040200", "09000000")


@dataclass(frozen=True)
class QMgr:
    name: str
    role: str  # repos | sender | backend
    index: int  # position in the estate's name order
    clusters: tuple[str, ...]
    version: str
    defclxq: str  # SCTQ | CHANNEL
    host: str
    ip: str
    created: datetime
    descr: str
    manual_xmitqs: tuple[tuple[str, str], ...] = ()  # (queue, CLCHNAME)
    platform: str = "UNIX"  # MVS: a z/OS member of the queue-sharing group (--qsg)

    @property
    def qmid(self) -> str:
        if self.platform == "MVS":  # z/OS: the name and the creation time as a store clock (STCK) value
            stck = (self.created - datetime(1900, 1, 1)) // timedelta(microseconds=1) * 4096
            return f"{self.name}.{stck:016X}"
        return f"{self.name}_{self.created.strftime('%Y-%m-%d_%H.%M.%S')}"

    @property
    def zos(self) -> bool:
        return self.platform == "MVS"

    @property
    def conname(self) -> str:
        return f"{self.host}(1414)"

    @property
    def cmdlevel(self) -> int:
        return int(self.version[1]) * 100 + int(self.version[3]) * 10 + int(self.version[5])

    @property
    def v90(self) -> bool:
        return self.version < "09010000"

    @property
    def repos(self) -> bool:
        return self.role == "repos"


@dataclass(frozen=True)
class Instance:
    queue: str
    host: str
    cluster: str
    clwluseq: str  # the QLOCAL's CLWLUSEQ: QMGR or ANY
    created: datetime


@dataclass(frozen=True)
class Queue:
    name: str
    index: int
    cluster: str
    hosts: tuple[str, ...]  # instance hosts, name order
    descr: str
    created: datetime
    persistent_share: float
    length_lo: int
    length_hi: int


@dataclass(frozen=True)
class App:
    name: str
    user: str
    uid: str
    appltype: int  # 6 UNIX, 28 JAVA
    pid: int = 0  # first process id of the generator's applications (the samples' draw theirs per day)

    @property
    def token(self) -> bytes:
        """AccountingToken as MQ sets it on Linux: length-prefixed numeric user id, type byte 0x06."""
        raw = bytes([len(self.uid)]) + self.uid.encode()
        return raw + b"\0" * (31 - len(raw)) + b"\x06"


@dataclass(frozen=True)
class Change:
    """One change of the configuration or channel state, effective from the capture at ``at``."""

    at: datetime  # the capture instant; the change itself happened CHANGE_LEAD_S before
    kind: str  # weight | chl_prty | q_prty | put | suspend | retrying | partition | igq
    qmgr: str  # for a partition: the host the channel goes to (``queue`` holds the sending queue manager)
    queue: str = ""
    value: object = None
    event: int = -1  # index of the event it belongs to
    order: int = 1  # 0 = an ending (applied before beginnings at the same instant)


@dataclass
class Event:
    """An event as the ground truth lists it."""

    index: int
    kind: str  # outage | suspend | weight_change | priority_change | put_disabled | partition | igq_change |
    # bind_on_open (planned only)
    qmgr: str  # for a partition: the sending queue manager
    start: datetime
    end: datetime | None  # None: instantaneous (weight change) or, for an outage, still going at the end
    queue: str = ""
    attribute: str = ""
    old: object = None
    new: object = None
    unresolved: bool = False
    detail: dict | None = None  # partition: hosts, first_back, first_back_at
    planned: dict | None = None  # --event: the day's number and the value as given (clwl.generate.planned)

    def to_json(self) -> dict:
        d = {"index": self.index, "kind": self.kind, "qmgr": self.qmgr, "start": iso(self.start),
             "end": iso(self.end) if self.end else None}
        if self.queue:
            d["queue"] = self.queue
        if self.attribute:
            d["attribute"] = self.attribute
        if self.old is not None or self.new is not None:
            d["old"], d["new"] = self.old, self.new
        if self.kind == "outage":
            d["unresolved"] = self.unresolved
        if self.detail:
            d.update(self.detail)
        if self.planned:
            d["planned"] = self.planned
        return d


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def at_min(day: date, minute: int, second: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day) + timedelta(minutes=minute, seconds=second)


class ConfigState:
    """The configuration and channel state in force (what the latest captures show)."""

    def __init__(self, estate: "Estate"):
        self.estate = estate
        self.weight: dict[str, int] = dict(estate.initial_weight)
        self.chl_prty: dict[str, int] = {q: 0 for q in estate.qmgrs}
        self.q_prty: dict[tuple[str, str], int] = {(i.queue, i.host): 0 for i in estate.instances}
        self.put_disabled: set[tuple[str, str]] = set()
        self.suspended: set[str] = set()
        self.retrying: set[str] = set()
        self.retrying_since: dict[str, datetime] = {}
        self.partitioned: set[tuple[str, str]] = set()  # (sending queue manager, host): its channel RETRYING
        self.partitioned_since: dict[tuple[str, str], datetime] = {}
        self.chl_altered: dict[str, datetime] = {q.name: q.created + timedelta(minutes=12, seconds=7)
                                                 for q in estate.qmgrs.values()}
        self.q_altered: dict[tuple[str, str], datetime] = {(i.queue, i.host): i.created + timedelta(seconds=41)
                                                           for i in estate.instances}
        self.clus_learnt: dict[str, datetime] = dict(self.chl_altered)
        self.admin_changes: dict[str, list[datetime]] = {}  # back end -> times it published a change
        self.igq: dict[str, bool] = dict(estate.qsg.igq) if estate.qsg else {}  # member -> IGQ(ENABLED)
        self.epoch = 0

    def apply(self, c: Change) -> None:
        when = c.at - timedelta(seconds=CHANGE_LEAD_S)
        qm = c.qmgr
        if c.kind == "weight":
            self.weight[qm] = int(c.value)  # type: ignore[arg-type]
            self.chl_altered[qm] = self.clus_learnt[qm] = when
        elif c.kind == "chl_prty":
            self.chl_prty[qm] = int(c.value)  # type: ignore[arg-type]
            self.chl_altered[qm] = self.clus_learnt[qm] = when
        elif c.kind == "q_prty":
            self.q_prty[(c.queue, qm)] = int(c.value)  # type: ignore[arg-type]
            self.q_altered[(c.queue, qm)] = when
        elif c.kind == "put":
            if c.value == "DISABLED":
                self.put_disabled.add((c.queue, qm))
            else:
                self.put_disabled.discard((c.queue, qm))
            self.q_altered[(c.queue, qm)] = when
        elif c.kind == "suspend":
            if c.value:
                self.suspended.add(qm)
            else:
                self.suspended.discard(qm)
            self.clus_learnt[qm] = when
        elif c.kind == "retrying":
            if c.value:
                self.retrying.add(qm)
                self.retrying_since[qm] = when
            else:
                self.retrying.discard(qm)
                self.retrying_since.pop(qm, None)
        elif c.kind == "partition":
            pair = (c.queue, qm)
            if c.value:
                self.partitioned.add(pair)
                self.partitioned_since[pair] = when
            else:
                self.partitioned.discard(pair)
                self.partitioned_since.pop(pair, None)
        elif c.kind == "igq":
            self.igq[qm] = bool(c.value)
        else:  # pragma: no cover
            raise ValueError(c.kind)
        if c.kind not in ("retrying", "partition"):
            self.admin_changes.setdefault(qm, []).append(when)
        self.epoch += 1

    def put_enabled(self, queue: str, host: str) -> bool:
        return (queue, host) not in self.put_disabled


@dataclass
class Estate:
    seed: int
    days: list[date]
    qmgrs: dict[str, QMgr]
    clusters: list[str]
    queues: list[Queue]
    instances: list[Instance]
    senders: list[str]
    backends: list[str]
    rest_qmgrs: list[str]
    knows: dict[str, list[str]]  # queue manager -> queue managers it knows (DISPLAY CLUSQMGR), name order
    initial_weight: dict[str, int]
    apps: dict[str, dict[str, App]]  # sender -> role (svc, batch, recon) -> App
    queue_weights: dict[str, list[int]]  # sender -> relative popularity of each queue
    sender_share: dict[str, int]  # sender -> relative share of the day's messages
    changes: list[Change] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    captures: dict[date, dict[int, list[str]]] = field(default_factory=dict)  # day -> minute -> QMs
    qsg: Q.QsgPlan | None = None  # --qsg: the queue-sharing group (its members are z/OS queue managers)
    bind_on_open_from: dict[str, date] = field(default_factory=dict)  # --event bind-on-open: sender -> the first
    # day its service application opens its queues with MQOO_BIND_ON_OPEN

    # -- names ------------------------------------------------------------------------------------
    def channel(self, qm: str, cluster: str) -> str:
        """Name of qm's cluster-receiver channel in a cluster."""
        return f"TO.{qm}" if len(self.clusters) == 1 else f"TO.{qm}.{cluster}"

    def channels_of(self, qm: str) -> list[tuple[str, str]]:
        """(channel, cluster) of every cluster-receiver of qm."""
        return [(self.channel(qm, c), c) for c in self.qmgrs[qm].clusters]

    def shared_clusters(self, a: str, b: str) -> list[str]:
        cb = set(self.qmgrs[b].clusters)
        return [c for c in self.qmgrs[a].clusters if c in cb]

    def xmitq_for(self, qm: str, channel: str) -> str:
        """Transmission queue of a cluster-sender channel (003: CLCHNAME, exact match first, then the
        generic match with most non-'*' characters, then the queue name; else DEFCLXQ)."""
        q = self.qmgrs[qm]
        exact = sorted(name for name, pat in q.manual_xmitqs if pat == channel)
        if exact:
            return exact[0]
        generic = sorted((-len(pat.replace("*", "")), name) for name, pat in q.manual_xmitqs
                         if "*" in pat and _wild_match(pat, channel))
        if generic:
            return generic[0][1]
        if q.defclxq == "CHANNEL":
            return f"SYSTEM.CLUSTER.TRANSMIT.{channel}"
        return "SYSTEM.CLUSTER.TRANSMIT.QUEUE"

    def instance(self, queue: str, host: str) -> Instance:
        return self._inst[(queue, host)]

    def queue(self, name: str) -> Queue:
        return self._queue[name]

    def __post_init__(self) -> None:
        self._inst = {(i.queue, i.host): i for i in self.instances}
        self._queue = {q.name: q for q in self.queues}

    @property
    def hosts(self) -> list[str]:
        """Queue managers that host at least one instance (the receivers), name order."""
        return sorted({i.host for i in self.instances})

    def weight_denominator(self) -> int:
        """Least common multiple of every CLWLWGHT the estate can show: 1000/CLWLWGHT is an exact multiple of
        1/denominator, so DestSeqFactors can be kept as integers."""
        return lcm(*WEIGHTS, SENDER_WEIGHT, *self.initial_weight.values())


def _wild_match(pattern: str, name: str) -> bool:
    parts = pattern.split("*")
    if not name.startswith(parts[0]) or not name.endswith(parts[-1]):
        return False
    pos = len(parts[0])
    for p in parts[1:-1]:
        i = name.find(p, pos)
        if i < 0:
            return False
        pos = i + len(p)
    return pos <= len(name) - len(parts[-1])


# --------------------------------------------------------------------------------------------------
# Errors (``build`` builds the estate from the options)


class EstateError(ValueError):
    """The options do not describe a possible estate."""

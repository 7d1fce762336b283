"""The sending queue manager's view of its cluster(s): what the CLWL algorithm decides over.

Everything here is what one queue manager knows (its own DISPLAY output): a partial repository only knows
the queue managers it has used (docs/algorithm.md, pitfall 6), so a replay always uses the
putting queue manager's view, never a full repository's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Channel states grouped into the tiers of steps 6-9 (docs/algorithm.md, reading 1). Anything not listed (for
# example SWITCHING) falls into the last tier, as the contract says "and any other state".
STATE_TIERS: tuple[frozenset[str], ...] = (
    frozenset({"INACTIVE", "RUNNING"}),
    frozenset({"BINDING", "INITIALIZING", "STARTING", "STOPPING"}),
    frozenset({"RETRYING"}),
    frozenset({"REQUESTING", "PAUSED", "STOPPED"}),
)


#: States in which a channel moves (or is about to move) what is put on its transmission queue: an INACTIVE channel
#: starts when a message arrives, BINDING, INITIALIZING and STARTING are on their way to RUNNING. In any other
#: state (RETRYING, STOPPING, STOPPED, PAUSED, REQUESTING, ...) a message routed to it waits on the queue.
MOVING_STATES = frozenset({"INACTIVE", "RUNNING", "BINDING", "INITIALIZING", "STARTING"})


def state_tier(state: str) -> int:
    """0-based tier of a channel state: 0 is best (INACTIVE/RUNNING), 3 is worst (and unknown states)."""
    for i, tier in enumerate(STATE_TIERS[:-1]):
        if state in tier:
            return i
    return len(STATE_TIERS) - 1


# DEFTYPE values that mean a manually defined CLUSSDR exists on the sending queue manager (step 10).
MANUAL_CLUSSDR_DEFTYPES = frozenset({"CLUSSDR", "CLUSSDRB"})

SCTQ = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"
QSG_XMITQ = "SYSTEM.QSG.TRANSMIT.QUEUE"
# Intra-group queuing carries a message on the shared SYSTEM.QSG.TRANSMIT.QUEUE with its transmission header
# (MQXQH: 4+4+48+48 bytes + the 324-byte MQMD v1 = 428 bytes), so the application data may be 428 less than the
# largest message the shared queue takes: the smaller of its MAXMSGL and its coupling-facility structure's limit,
# 63 KB at CFLEVEL(1)-(3), 100 MB at CFLEVEL(4) and (5), where larger messages are offloaded to Db2 or SMDS.
MQXQH_LENGTH = 428
CF_SMALL_MESSAGE_LIMIT = 63 * 1024
CF_OFFLOAD_MESSAGE_LIMIT = 100 * 1024 * 1024
IGQ_DEFAULT_MAX_MESSAGE = CF_SMALL_MESSAGE_LIMIT - MQXQH_LENGTH
IGQ_DEFAULT_WHY = (f"{IGQ_DEFAULT_MAX_MESSAGE:,} = {CF_SMALL_MESSAGE_LIMIT:,} (63 KB, assumed: the structure of "
                   f"{QSG_XMITQ} was not captured, taken as CFLEVEL(3) as in IBM's example) less the "
                   f"{MQXQH_LENGTH}-byte MQXQH")


@dataclass(frozen=True)
class QmgrAttributes:
    """DISPLAY QMGR of the sending queue manager (only what routing needs)."""

    name: str
    qmid: str = ""
    clwluseq: str = "LOCAL"  # LOCAL | ANY
    clwlmruc: int = 999_999_999
    defclxq: str = "SCTQ"  # SCTQ | CHANNEL
    qsgname: str = ""
    igq: bool = False
    # The clusters it is a full repository for (REPOS, or REPOSNL's names): ``clwl lint`` compares views with
    # these; routing does not read it, so it takes no part in a view's equality.
    repos: frozenset[str] = field(default=frozenset(), compare=False)


#: The CLWLWGHT MQ gives a channel when none is set (and step 12 counts for a local instance without a captured
#: receiver).
DEFAULT_CLWLWGHT = 50


@dataclass(frozen=True)
class ClusterChannel:
    """A route from the sending queue manager to one cluster queue manager: one CLUSSDR channel.

    Workload attributes are the ones the target's CLUSRCVR advertises (shown in DISPLAY CLUSQMGR); values
    set on a manual CLUSSDR are ignored by MQ (docs/algorithm.md, pitfall 1).
    """

    name: str
    qmgr: str
    clusters: frozenset[str]
    deftype: str = "CLUSSDRA"
    clwlrank: int = 0
    clwlprty: int = 0
    clwlwght: int = 50
    netprty: int = 0
    suspended: bool = False
    state: str = "INACTIVE"
    current_xmitq: str = ""  # what the channel uses now (CHSTATUS XMITQ, else CLUSQMGR XMITQ)
    qmid: str = ""
    qmtype: str = field(default="", compare=False)  # REPOS (full repository) | NORMAL | "": not captured (lint)

    @property
    def manual(self) -> bool:
        return self.deftype in MANUAL_CLUSSDR_DEFTYPES


@dataclass(frozen=True)
class QueueInstance:
    """One advertised instance of a cluster queue (a DISPLAY QCLUSTER record, clusters merged).

    ``clusqt`` is QLOCAL, QALIAS, QREMOTE or QMGR (a queue manager alias). ``local`` marks the instance
    hosted by the sending queue manager itself.
    """

    queue: str
    qmgr: str
    clusters: frozenset[str]
    clusqt: str = "QLOCAL"
    put_enabled: bool = True
    clwlrank: int = 0
    clwlprty: int = 0
    defbind: str = "OPEN"
    local: bool = False
    clwluseq: str = "QMGR"  # only known for the local instance (not advertised): LOCAL | ANY | QMGR
    qmid: str = ""

    @property
    def qmgr_alias(self) -> bool:
        return self.clusqt == "QMGR"


@dataclass(frozen=True)
class LocalQueue:
    """A DISPLAY QLOCAL record of the sending queue manager (routing uses CLWLUSEQ and xmitq CLCHNAME)."""

    name: str
    usage: str = "NORMAL"
    clchname: str = ""
    clusters: frozenset[str] = frozenset()
    clwluseq: str = "QMGR"
    put_enabled: bool = True
    clwlrank: int = 0
    clwlprty: int = 0
    defbind: str = "OPEN"
    # Poison-message handling and streaming, which ``clwl lint`` compares across a cluster queue's instances
    # (routing does not read them): BOTHRESH 0 and BOQNAME blank are MQ's defaults, "no backout handling".
    bothresh: int = field(default=0, compare=False)
    boqname: str = field(default="", compare=False)
    streamq: str = field(default="", compare=False)
    shown: frozenset[str] = field(default=frozenset(), compare=False)  # the attributes its record showed


@dataclass(frozen=True)
class LocalAlias:
    """DISPLAY QALIAS: a local alias resolves to its TARGET, and its DEFBIND overrides the target's."""

    name: str
    target: str
    defbind: str = "OPEN"
    clusters: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RemoteDefinition:
    """DISPLAY QREMOTE. With a blank RNAME it is a queue manager alias: RQMNAME is the real target."""

    name: str
    rname: str
    rqmname: str
    xmitq: str = ""
    clusters: frozenset[str] = frozenset()

    @property
    def qmgr_alias(self) -> bool:
        return not self.rname


@dataclass(frozen=True)
class ClusterView:
    """Everything the sending queue manager knows, at one moment."""

    qmgr: QmgrAttributes
    channels: tuple[ClusterChannel, ...] = ()
    instances: tuple[QueueInstance, ...] = ()
    local_queues: tuple[LocalQueue, ...] = ()
    aliases: tuple[LocalAlias, ...] = ()
    remotes: tuple[RemoteDefinition, ...] = ()
    # The local queue manager's own CLUSRCVR channels (DEFTYPE CLUSRCVR records): its clusters, and the
    # CLWLWGHT the local instance competes with in step 12 (docs/algorithm.md, reading 2).
    local_receivers: tuple[ClusterChannel, ...] = ()
    # Queue managers of the sending queue manager's queue-sharing group (intra-group queuing path).
    qsg_members: frozenset[str] = frozenset()
    igq_max_message: int = IGQ_DEFAULT_MAX_MESSAGE
    igq_limit_why: str = field(default=IGQ_DEFAULT_WHY, compare=False)  # which limit decided igq_max_message
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def local_name(self) -> str:
        return self.qmgr.name

    def local_receiver(self, instance: QueueInstance | None) -> ClusterChannel | None:
        """The sending queue manager's own CLUSRCVR whose CLWLWGHT its local ``instance`` competes with in step 12
        (docs/algorithm.md, reading 2): the first in name order that shares a cluster with the instance, else the
        first; None without a captured receiver (step 12 then counts :data:`DEFAULT_CLWLWGHT`). The one rule the
        router, ``clwl advise`` and the report's configured shares all ask."""
        clusters = instance.clusters if instance is not None else frozenset()
        for r in self.local_receivers:
            if r.clusters & clusters:
                return r
        return self.local_receivers[0] if self.local_receivers else None

    def local_weight(self, instance: QueueInstance | None) -> int:
        """The CLWLWGHT step 12 counts for the local ``instance`` (:meth:`local_receiver`'s)."""
        r = self.local_receiver(instance)
        return r.clwlwght if r is not None else DEFAULT_CLWLWGHT

    @property
    def local_clusters(self) -> frozenset[str]:
        out: set[str] = set()
        for r in self.local_receivers:
            out |= r.clusters
        return frozenset(out)

    def instances_of(self, queue: str) -> list[QueueInstance]:
        return [i for i in self.instances if i.queue == queue]

    def channels_to(self, qmgr: str) -> list[ClusterChannel]:
        return [c for c in self.channels if c.qmgr == qmgr]

    def local_queue(self, name: str) -> LocalQueue | None:
        for q in self.local_queues:
            if q.name == name:
                return q
        return None

    def alias(self, name: str) -> LocalAlias | None:
        for a in self.aliases:
            if a.name == name:
                return a
        return None

    def remote(self, name: str) -> RemoteDefinition | None:
        for r in self.remotes:
            if r.name == name:
                return r
        return None

    def known_qmgrs(self) -> set[str]:
        return {c.qmgr for c in self.channels}

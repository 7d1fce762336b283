"""Small builders for the algorithm tests: ClusterViews straight from the model dataclasses (no parser).

Conventions used by every test that imports this module:
- the sending (local) queue manager is ``QM1``, a member of cluster ``CL1`` through its CLUSRCVR ``TO.QM1``
  (CLWLWGHT 50 unless ``local_weight`` says otherwise);
- ``chan("QM2")`` is the auto-defined cluster-sender ``TO.QM2`` to QM2 in CL1 with default workload attributes
  (CLWLRANK 0, CLWLPRTY 0, CLWLWGHT 50, NETPRTY 0, INACTIVE, not suspended);
- ``inst("QM2")`` is QM2's instance of queue ``Q1`` in CL1 (PUT(ENABLED), CLWLRANK 0, CLWLPRTY 0);
- an instance whose queue manager is the local one is marked ``local=True`` by ``make_view``;
- trace labels are ``QMGR/CHANNEL`` for a remote destination and ``QMGR/local`` for the local instance
  (``clwl.engine.algorithm.Candidate.label``).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Iterable, Optional, Sequence

from clwl.engine.algorithm import Request
from clwl.engine.model import (
    IGQ_DEFAULT_MAX_MESSAGE,
    ClusterChannel,
    ClusterView,
    LocalAlias,
    LocalQueue,
    QmgrAttributes,
    QueueInstance,
    RemoteDefinition,
)
from clwl.engine.router import Route, RouteError, Router, TraceEntry

LOCAL = "QM1"
CL = "CL1"
SCTQ = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"


def chan(qmgr: str, name: Optional[str] = None, *, clusters: Iterable[str] = (CL,), **attrs) -> ClusterChannel:
    """A cluster-sender channel to ``qmgr`` (default name ``TO.<qmgr>``)."""
    return ClusterChannel(name=name or f"TO.{qmgr}", qmgr=qmgr, clusters=frozenset(clusters), **attrs)


def inst(qmgr: str, queue: str = "Q1", *, clusters: Iterable[str] = (CL,), **attrs) -> QueueInstance:
    """An instance of ``queue`` hosted by ``qmgr``."""
    return QueueInstance(queue=queue, qmgr=qmgr, clusters=frozenset(clusters), **attrs)


def qmgr_alias(qmgr: str, name: str = "QMALIAS", **attrs) -> QueueInstance:
    """A clustered queue manager alias (DISPLAY QCLUSTER CLUSQT(QMGR)) advertised by ``qmgr``."""
    return inst(qmgr, name, clusqt="QMGR", **attrs)


def xmitq(name: str, clchname: str) -> LocalQueue:
    """A manually defined cluster transmission queue: QLOCAL USAGE(XMITQ) CLCHNAME(...)."""
    return LocalQueue(name=name, usage="XMITQ", clchname=clchname)


def make_view(
    channels: Sequence[ClusterChannel] = (),
    instances: Sequence[QueueInstance] = (),
    *,
    local: str = LOCAL,
    local_clusters: Iterable[str] = (CL,),
    local_weight: int = 50,
    local_receivers: Optional[Sequence[ClusterChannel]] = None,
    clwluseq: str = "LOCAL",
    clwlmruc: int = 999_999_999,
    defclxq: str = "SCTQ",
    local_queues: Sequence[LocalQueue] = (),
    aliases: Sequence[LocalAlias] = (),
    remotes: Sequence[RemoteDefinition] = (),
    qsgname: str = "",
    igq: bool = False,
    qsg_members: Iterable[str] = (),
    igq_max_message: int = IGQ_DEFAULT_MAX_MESSAGE,
) -> ClusterView:
    if local_receivers is None:
        local_receivers = (ClusterChannel(name=f"TO.{local}", qmgr=local, clusters=frozenset(local_clusters),
                                          deftype="CLUSRCVR", clwlwght=local_weight),)
    marked = tuple(replace(i, local=True) if i.qmgr == local else i for i in instances)
    return ClusterView(
        qmgr=QmgrAttributes(name=local, clwluseq=clwluseq, clwlmruc=clwlmruc, defclxq=defclxq,
                            qsgname=qsgname, igq=igq),
        channels=tuple(channels),
        instances=marked,
        local_queues=tuple(local_queues),
        aliases=tuple(aliases),
        remotes=tuple(remotes),
        local_receivers=tuple(local_receivers),
        qsg_members=frozenset(qsg_members),
        igq_max_message=igq_max_message,
    )


def spread_view(qmgrs: Sequence[str] = ("QM2", "QM3", "QM4"), queue: str = "Q1", *,
                chan_attrs: Optional[dict] = None, inst_attrs: Optional[dict] = None,
                local_instance: Optional[dict] = None, **view_kw) -> ClusterView:
    """One channel ``TO.<qm>`` and one instance of ``queue`` per remote queue manager.

    ``chan_attrs`` / ``inst_attrs`` map a queue manager name to attribute overrides of its channel /
    instance. ``local_instance`` (attribute overrides, may be ``{}``) adds the local queue manager's own
    instance of the queue.
    """
    chan_attrs = chan_attrs or {}
    inst_attrs = inst_attrs or {}
    channels = [chan(qm, **chan_attrs.get(qm, {})) for qm in qmgrs]
    instances = [inst(qm, queue, **inst_attrs.get(qm, {})) for qm in qmgrs]
    if local_instance is not None:
        instances.append(inst(view_kw.get("local", LOCAL), queue, **local_instance))
    return make_view(channels, instances, **view_kw)


def req(queue: str = "Q1", **kw) -> Request:
    return Request(queue=queue, **kw)


# -- running ------------------------------------------------------------------------------------------
def route_n(router: Router, request: Request, n: int, **kw) -> list:
    return [router.route(request, **kw) for _ in range(n)]


def qmgrs(results) -> list[str]:
    return [r.qmgr if isinstance(r, Route) else r.error for r in results]


def dest(r) -> tuple:
    if isinstance(r, RouteError):
        return (r.error, r.reason)
    return (r.qmgr, r.channel, r.decided_by)


def counts(results) -> dict[str, int]:
    out: dict[str, int] = {}
    for q in qmgrs(results):
        out[q] = out.get(q, 0) + 1
    return out


# -- traces -------------------------------------------------------------------------------------------
def entries(route, step: str) -> list[TraceEntry]:
    return [t for t in (route.trace or ()) if t.step == step]


def eliminated_at(route, step: str) -> tuple[str, ...]:
    """Every label the trace entries of ``step`` eliminated, in order (step 1 has three sub-rules)."""
    out: list[str] = []
    for t in entries(route, step):
        out.extend(t.eliminated)
    return tuple(out)


def steps_in_trace(route) -> list[str]:
    """Ids of the steps that applied (a step that did not apply may still leave a "not applied: why" entry)."""
    return [t.step for t in (route.trace or ()) if t.step not in ("start", "note")
            and not t.note.startswith("not applied")]


def not_applied(route, step: str) -> str:
    """The reason the trace gives for ``step`` not applying ("" if it gives none)."""
    return next((t.note for t in (route.trace or ()) if t.step == step and t.note.startswith("not applied")), "")


def deciding_entry(route) -> TraceEntry:
    """The trace entry after which one candidate remained: the last one of the step named decided_by."""
    es = entries(route, route.decided_by)
    assert es, f"no trace entry for step {route.decided_by}: {steps_in_trace(route)}"
    return es[-1]


def factor(router: Router, key: str) -> Fraction:
    return router.state.factor(key)


def seqno(router: Router, key: str) -> int:
    return router.state.seq_number(key)

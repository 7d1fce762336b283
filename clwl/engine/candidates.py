"""Candidate resolution: from a request (queue name, target queue manager) and the sending queue manager's view
to the destinations the algorithm chooses among, before any step runs.

Names are resolved first, as the queue manager resolves them: a local QREMOTE queue manager alias to its real
target, a local alias to its base queue, a queue that is not clustered to the queue manager's own queue, a local
remote definition to the channels to its queue manager. A name that resolves to nothing fails the put here
(2085 unknown object, 2087 unknown remote queue manager, 2270 no instance reachable), before step 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from clwl.engine.algorithm import (
    MQRC_NO_DESTINATIONS_AVAILABLE,
    MQRC_UNKNOWN_OBJECT_NAME,
    MQRC_UNKNOWN_REMOTE_Q_MGR,
    Candidate,
    Request,
)
from clwl.engine.model import ClusterView, QueueInstance


@dataclass(frozen=True)
class Candidates:
    """The destinations of a request, in the order the steps see them (queue manager, then channel name)."""

    candidates: list[Candidate]
    choosing_qmgr: bool  # a queue manager is being chosen (steps 2, 11a), not a queue (1, 3, 4b, 11b)
    notes: tuple[str, ...]  # how the names were resolved, for the trace


@dataclass(frozen=True)
class NoCandidates:
    """The put fails before any step runs: the MQ reason, and the queue name it was resolved to."""

    queue: str
    error: str  # MQRC_... name
    reason: int  # MQ reason code
    detail: str


Resolution = Union[Candidates, NoCandidates]


def resolve(view: ClusterView, request: Request) -> Resolution:
    """The candidates for ``request`` in ``view``, or why there are none."""
    notes: list[str] = []
    target = request.target_qmgr
    queue = request.queue
    if target:
        rem = view.remote(target)
        if rem is not None and rem.qmgr_alias and rem.rqmname:
            notes.append(f"queue manager alias {target} resolves to {rem.rqmname} (QREMOTE)")
            target = rem.rqmname
        if target == view.local_name:
            local = QueueInstance(queue, target, frozenset(), local=True)
            return Candidates([Candidate(target, None, local)], True, tuple(notes))
        aliases = [i for i in view.instances_of(target) if i.qmgr_alias]
        if aliases:
            return _reachable(view, aliases, True, notes)
        chans = view.channels_to(target)
        if not chans:
            return NoCandidates(queue, *MQRC_UNKNOWN_REMOTE_Q_MGR,
                                f"queue manager {target} is not known to {view.local_name}")
        return Candidates([Candidate(target, ch, None) for ch in chans], True, tuple(notes))
    alias = view.alias(queue)
    if alias is not None and not view.instances_of(queue):
        notes.append(f"{queue} is a local alias of {alias.target}")
        queue = alias.target
    instances = view.instances_of(queue)
    if not instances:
        lq = view.local_queue(queue)
        if lq is not None:
            notes.append(f"{queue} is not a cluster queue: the queue manager's own queue")
            inst = QueueInstance(queue, view.local_name, lq.clusters, put_enabled=lq.put_enabled,
                                 local=True, clwluseq=lq.clwluseq)
            return Candidates([Candidate(view.local_name, None, inst)], False, tuple(notes))
        rem = view.remote(queue)
        if rem is not None and not rem.qmgr_alias and view.channels_to(rem.rqmname):
            notes.append(f"{queue} is a remote definition of {rem.rname} at {rem.rqmname}")
            return Candidates([Candidate(rem.rqmname, ch, None) for ch in view.channels_to(rem.rqmname)], True,
                              tuple(notes))
        return NoCandidates(queue, *MQRC_UNKNOWN_OBJECT_NAME,
                            f"{queue} is not a queue, alias or cluster queue known to {view.local_name}")
    if all(i.qmgr_alias for i in instances):
        notes.append(f"{queue} is a clustered queue manager alias")
        return _reachable(view, instances, True, notes)
    return _reachable(view, [i for i in instances if not i.qmgr_alias], False, notes)


def _reachable(view: ClusterView, instances: list[QueueInstance], choosing_qmgr: bool,
               notes: list[str]) -> Resolution:
    """One candidate per channel to each instance's queue manager (the local instance needs none)."""
    out: list[Candidate] = []
    for inst in sorted(instances, key=lambda i: i.qmgr):
        if inst.local or inst.qmgr == view.local_name:
            out.append(Candidate(inst.qmgr, None, inst))
            continue
        chans = view.channels_to(inst.qmgr)
        if not chans:
            notes.append(f"no channel to {inst.qmgr} is known: its instance of {inst.queue} is not reachable")
        for ch in sorted(chans, key=lambda c: c.name):
            out.append(Candidate(inst.qmgr, ch, inst))
    if not out:
        return NoCandidates(instances[0].queue, *MQRC_NO_DESTINATIONS_AVAILABLE,
                            "; ".join(notes) or "no instance is reachable")
    return Candidates(out, choosing_qmgr, tuple(notes))


#: DEFBIND values -> the bind option MQOO_BIND_AS_Q_DEF stands for (the put records' spelling), and back.
_DEFBIND_AS_BIND = {"OPEN": "open", "NOTFIXED": "notfixed", "GROUP": "group"}
BIND_AS_DEFBIND = {bind: defbind for defbind, bind in _DEFBIND_AS_BIND.items()}


@dataclass(frozen=True)
class DefbindSource:
    """What MQOO_BIND_AS_Q_DEF means for a queue name opened on one queue manager, and which definition decided.

    ``bind``: the bind option (``open`` | ``notfixed`` | ``group``). ``kind``: the definition whose DEFBIND
    decided: ``QALIAS`` (a local alias), ``QLOCAL`` (a local queue), ``QCLUSTER`` (the cluster queue, as its
    instances advertise it), or ``default`` (none did: instances that disagree, or no definition; MQ's default
    DEFBIND, OPEN). ``name``: the name opened. ``defbind``: the deciding DEFBIND as captured, upper case (OPEN
    for the default). ``instances``: the cluster queue's instances consulted (QCLUSTER and default only)."""

    bind: str
    kind: str
    name: str
    defbind: str
    instances: tuple[QueueInstance, ...] = ()

    @property
    def hosts(self) -> tuple[str, ...]:
        """The queue managers whose instances were consulted, sorted."""
        return tuple(sorted({i.qmgr for i in self.instances}))


#: The object type a cluster queue instance's CLUSQT names, for an ALTER of it.
ALTER_TYPE = {"QLOCAL": "QLOCAL", "QALIAS": "QALIAS", "QREMOTE": "QREMOTE", "QMGR": "QREMOTE"}


def alter_defbind(src: DefbindSource, value: str, here: str) -> str:
    """The MQSC that gives the definition that decides MQOO_BIND_AS_Q_DEF (``src``, as :func:`defbind_source`
    found it on queue manager ``here``) DEFBIND(``value``): its local alias, else its local queue and the other
    hosts, else the cluster queue's instances on their hosts; with no definition, a definition to make. The one
    wording that ``clwl lint`` and the remedies (clwl/analyses/remedies.py) give."""
    name = src.name
    if src.kind == "QALIAS":
        return f"ALTER QALIAS({name}) DEFBIND({value}) on {here}"
    if src.kind == "QLOCAL":
        return f"ALTER QLOCAL({name}) DEFBIND({value}) on {here} and on every other host of {name}"
    if src.instances:
        kinds = sorted({ALTER_TYPE.get(i.clusqt, "QLOCAL") for i in src.instances})
        return " or ".join(f"ALTER {k}({name}) DEFBIND({value})" for k in kinds) + f" on {', '.join(src.hosts)}"
    return f"define {name} (or an alias of it) with DEFBIND({value})"


def defbind_source(view: ClusterView, queue: str) -> DefbindSource:
    """Which definition decides MQOO_BIND_AS_Q_DEF when ``queue`` is opened on the view's queue manager, in MQ's
    order: a local alias (its DEFBIND wins over its target's), then a local queue, then the cluster queue's
    DEFBIND as its instances advertise it. Instances that disagree, or no definition at all: OPEN, MQ's default
    DEFBIND. The one place that order is walked (the replay, clwl lint and the remedies all ask here)."""
    alias = view.alias(queue)
    if alias is not None:
        return _decided("QALIAS", alias.name, alias.defbind.upper())
    local = view.local_queue(queue)
    if local is not None:
        return _decided("QLOCAL", local.name, local.defbind.upper())
    instances = tuple(view.instances_of(queue))
    advertised = {i.defbind.upper() for i in instances}
    if len(advertised) == 1:
        return _decided("QCLUSTER", queue, advertised.pop(), instances)
    return DefbindSource("open", "default", queue, "OPEN", instances)


def _decided(kind: str, name: str, defbind: str, instances: tuple[QueueInstance, ...] = ()) -> DefbindSource:
    # A DEFBIND value MQ does not know reads as its default, OPEN.
    return DefbindSource(_DEFBIND_AS_BIND.get(defbind, "open"), kind, name, defbind, instances)


def queue_defbind(view: ClusterView, queue: str) -> str:
    """What MQOO_BIND_AS_Q_DEF means when ``queue`` is opened on the view's queue manager, as a bind option
    (``open`` | ``notfixed`` | ``group``): :func:`defbind_source`'s bind."""
    return defbind_source(view, queue).bind


def known_queue_names(view: ClusterView) -> str:
    """The names a put on the view's queue manager can resolve through the cluster, in words, for an answer to a
    name it does not know (2085): the cluster queues, then the clustered queue manager aliases and the local
    aliases of cluster queues, each list sorted."""
    queues = sorted({i.queue for i in view.instances if not i.qmgr_alias})
    qmgr_aliases = sorted({i.queue for i in view.instances if i.qmgr_alias})
    aliases = sorted(a.name for a in view.aliases if view.instances_of(a.target))
    if not (queues or qmgr_aliases or aliases):
        return f"{view.local_name} knows no cluster queue (its DISPLAY QCLUSTER output shows none)"
    parts = [f"the cluster queues {view.local_name} knows: {', '.join(queues) or 'none'}"]
    if qmgr_aliases:
        parts.append(f"queue manager aliases: {', '.join(qmgr_aliases)}")
    if aliases:
        parts.append(f"local aliases of cluster queues: {', '.join(aliases)}")
    return "; ".join(parts)

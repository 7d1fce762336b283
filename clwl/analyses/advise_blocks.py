"""What blocks a target share that weights alone cannot reach (``clwl advise``, clwl/analyses/advise.py, part 3): the engine's
explaining path for one message names the step that eliminated each destination before step 12
(:func:`eliminations`); :data:`BLOCKERS` has one entry per kind of step, each with the cause in the view's own
attributes and what an administrator changes instead, in MQ's terms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from clwl.engine import algorithm as steps
from clwl.engine.algorithm import PROFILES, Candidate, Request, Step
from clwl.engine.candidates import Candidates, resolve
from clwl.engine.model import ClusterChannel, ClusterView, QueueInstance
from clwl.engine.router import Route, RouteError, Router

#: DISPLAY QCLUSTER's CLUSQT -> the object type an ALTER names (a queue manager alias is a QREMOTE).
_ALTER_TYPE = {"QLOCAL": "QLOCAL", "QALIAS": "QALIAS", "QREMOTE": "QREMOTE", "QMGR": "QREMOTE"}


@dataclass(frozen=True)
class Blocked:
    """Why a queue manager's target cannot be reached with weights, and what to change instead."""

    qmgr: Optional[str]  # None: every destination (a property of the sender or of the profile)
    kind: str  # Blocker.kind
    step: str  # the step of docs/algorithm.md that decides it
    cause: str
    remedy: str

    def as_dict(self) -> dict:
        return {"qmgr": self.qmgr, "kind": self.kind, "step": self.step, "cause": self.cause, "remedy": self.remedy}


@dataclass(frozen=True)
class Elimination:
    """One step eliminating a queue manager's last candidates before step 12 (or what step 12 cannot do)."""

    view: ClusterView
    queue: str
    qmgr: Optional[str]
    step: Optional[Step]
    gone: tuple[Candidate, ...] = ()  # the queue manager's candidates the step eliminated
    kept: tuple[Candidate, ...] = ()  # what the step kept
    target: float = 0.0

    @property
    def sender(self) -> str:
        return self.view.local_name

    @property
    def channel(self) -> Optional[ClusterChannel]:
        return next((c.channel for c in self.gone if c.channel is not None), None)

    @property
    def instance(self) -> Optional[QueueInstance]:
        return next((c.instance for c in self.gone if c.instance is not None), None)


@dataclass(frozen=True)
class Blocker:
    """A kind of reason weights cannot reach a target: the engine's steps that decide it, the cause in the
    view's own attributes, and what an administrator changes instead."""

    kind: str
    steps: tuple[Step, ...]
    cause: Callable[[Elimination], str]
    remedy: Callable[[Elimination], str]


def _clusters(names) -> str:
    return ", ".join(sorted(names)) or "no cluster"


def _top(kept, value) -> int:
    return max((value(c) for c in kept), default=0)


def _alter_queue(e: Elimination, attr: str) -> str:
    inst = e.instance
    kind = _ALTER_TYPE.get(inst.clusqt, "QLOCAL") if inst else "QLOCAL"
    return f"ALTER {kind}({inst.queue if inst else e.queue}) {attr}"


def _put_disabled_cause(e: Elimination) -> str:
    return f"{e.qmgr}'s instance of {e.instance.queue if e.instance else e.queue} is PUT(DISABLED)"


def _put_disabled_remedy(e: Elimination) -> str:
    return f"on {e.qmgr}: {_alter_queue(e, 'PUT(ENABLED)')}, when it should take messages again"


def _cluster_cause(e: Elimination) -> str:
    inst, ch = e.instance, e.channel
    return (f"{e.qmgr}'s instance of {e.queue} is in {_clusters(inst.clusters if inst else ())} and its channel "
            f"{ch.name if ch else '-'} in {_clusters(ch.clusters if ch else ())}; {e.sender} is in "
            f"{_clusters(e.view.local_clusters)}: no cluster in common")


def _cluster_remedy(e: Elimination) -> str:
    return (f"put {e.queue} on {e.qmgr} in a cluster {e.sender} is a member of (its CLUSTER or CLUSNL), or make "
            f"{e.sender} a member of the queue's cluster")


def _local_cause(e: Elimination) -> str:
    local = next((c.instance for c in e.kept if c.local and c.instance is not None), None)
    useq = local.clwluseq if local else "QMGR"
    if e.step is steps.choose_local_instance_always:
        return f"{e.sender} hosts an instance of {e.queue}, and the legacy profile always chooses the local instance"
    why = f"the queue's CLWLUSEQ({useq})" + (f" defers to the queue manager's CLWLUSEQ({e.view.qmgr.clwluseq})"
                                             if useq == "QMGR" else "")
    return (f"{e.sender} hosts an instance of {e.queue} and {why}: step 3 chooses the local instance for every "
            f"message put on {e.sender}")


def _local_remedy(e: Elimination) -> str:
    return (f"on {e.sender}: ALTER QLOCAL({e.queue}) CLWLUSEQ(ANY), so that the local instance competes in step 12 "
            f"with the CLWLWGHT of {e.sender}'s own CLUSRCVR (then run clwl advise again); or put from a queue "
            "manager that hosts no instance")


_QUEUE_LEVEL_STEPS = (steps.eliminate_lower_ranked_queues, steps.eliminate_lower_priority_queues)


def _level(e: Elimination, attr: str) -> tuple[str, int, str, bool]:
    """What a rank or priority step held against ``e``'s queue manager: (the object and its value, the highest
    value kept, the ALTER that would raise it, whether it is a channel's). Steps 4a and 11a compare channels,
    then queue manager aliases; 4b and 11b the queues."""
    name = attr.upper()
    if not any(e.step is st for st in _QUEUE_LEVEL_STEPS):
        top = _top(e.kept, lambda c: getattr(c.channel, attr) if c.channel else 0)
        ch = e.channel
        if ch is not None and getattr(ch, attr) < top:
            return (f"{ch.name} advertises {name}({getattr(ch, attr)})", top,
                    f"ALTER CHANNEL({ch.name}) CHLTYPE(CLUSRCVR) {name}({top})", True)
        top = _top(e.kept, lambda c: getattr(c.instance, attr) if c.is_qmgr_alias else 0)
    else:
        top = _top(e.kept, lambda c: getattr(c.instance, attr) if c.instance and not c.instance.qmgr_alias else 0)
    inst = e.instance
    return (f"{e.qmgr}'s instance of {inst.queue if inst else e.queue} has {name}({getattr(inst, attr, 0)})", top,
            _alter_queue(e, f"{name}({top})"), False)


def _rank_cause(e: Elimination) -> str:
    what, top, _, _ = _level(e, "clwlrank")
    return (f"{what}, below the highest remaining, CLWLRANK({top}); rank is taken before channel state, so it "
            "gets nothing even while the others are down")


def _rank_remedy(e: Elimination) -> str:
    _, _, alter, channel = _level(e, "clwlrank")
    return (f"on {e.qmgr}: {alter} (or lower the others' rank"
            + ("; a channel's rank counts for every queue over it)" if channel else ")"))


def _suspended_cause(e: Elimination) -> str:
    return f"{e.qmgr} is suspended from the cluster (SUSPEND(YES) on {e.channel.name}) and other destinations are not"


def _suspended_remedy(e: Elimination) -> str:
    return f"on {e.qmgr}: RESUME QMGR CLUSTER({_clusters(e.channel.clusters)}), when its maintenance is over"


def _priority_cause(e: Elimination) -> str:
    what, top, _, _ = _level(e, "clwlprty")
    return (f"{what}, below the highest remaining, CLWLPRTY({top}): it gets messages only while no "
            "higher-priority destination's channel is running")


def _priority_remedy(e: Elimination) -> str:
    _, _, alter, channel = _level(e, "clwlprty")
    return (f"on {e.qmgr}: {alter} (or lower the others' priority"
            + ("; a channel's priority counts for every queue over it)" if channel else ")"))


def _mruc_cause(e: Elimination) -> str:
    channels = len({c.key for c in (*e.gone, *e.kept) if c.channel is not None})
    return (f"{e.sender}'s CLWLMRUC({e.view.qmgr.clwlmruc}) is below the {channels} channels: step 11c keeps only "
            "the most recently used ones, and step 12 rotates among those alone")


def _mruc_remedy(e: Elimination) -> str:
    return f"on {e.sender}: ALTER QMGR CLWLMRUC({len(e.view.channels)}) or more"


def _other_cause(e: Elimination) -> str:
    return f"step {e.step.id} eliminates it: {e.step.explanation}"


def _other_remedy(e: Elimination) -> str:
    return f"see step {e.step.id} in docs/algorithm.md"


def _unreachable_cause(e: Elimination) -> str:
    return (f"{e.sender} knows no cluster-sender channel to {e.qmgr}: its DISPLAY CLUSQMGR has no record of "
            f"{e.qmgr} (a partial repository learns of a queue manager when it first uses it)")


def _unreachable_remedy(e: Elimination) -> str:
    return (f"check DISPLAY CLUSQMGR({e.qmgr}) on {e.sender}; capture it again once {e.sender} knows {e.qmgr}, "
            "then run clwl advise again")


def _zero_cause(e: Elimination) -> str:
    return (f"the target gives {e.qmgr} {e.target:g} %, but CLWLWGHT is at least 1: step 12 still sends it its "
            "weight's share")


def _zero_remedy(e: Elimination) -> str:
    return (f"to send {e.qmgr} nothing from {e.sender}: give the other instances of {e.queue} a higher queue "
            f"CLWLPRTY than {e.qmgr}'s (step 11b: it then takes messages only while none of theirs is reachable; "
            f"this queue only), or {_alter_queue(e, 'PUT(DISABLED)')} on {e.qmgr} (no messages from any sender)")


def _profile_cause(e: Elimination) -> str:
    return f"step {e.step.id} of this profile does not use CLWLWGHT: {e.step.explanation}"


def _profile_remedy(e: Elimination) -> str:
    return "weights need a queue manager with the CLWL attributes (profile default or mq9)"


#: Every kind of reason, with the steps that decide it. A step not named falls to OTHER; UNREACHABLE, ZERO and
#: PROFILE are no elimination of one message but what the search meets (the kind names the case).
BLOCKERS: tuple[Blocker, ...] = (
    Blocker("put-disabled", (steps.eliminate_put_disabled_queues, steps.eliminate_put_disabled_while_enabled_remain,
                             steps.eliminate_put_disabled_qmgr_aliases), _put_disabled_cause, _put_disabled_remedy),
    Blocker("no-shared-cluster", (steps.eliminate_queues_not_sharing_a_cluster,
                                  steps.eliminate_channels_not_in_queue_cluster,
                                  steps.eliminate_channels_not_in_local_cluster), _cluster_cause, _cluster_remedy),
    Blocker("local-instance", (steps.choose_local_instance, steps.choose_local_instance_always), _local_cause,
            _local_remedy),
    Blocker("rank", (steps.eliminate_lower_ranked_channels, steps.eliminate_lower_ranked_queues), _rank_cause,
            _rank_remedy),
    Blocker("suspended", (steps.prefer_resumed_qmgrs,), _suspended_cause, _suspended_remedy),
    Blocker("priority", (steps.eliminate_lower_priority_channels, steps.eliminate_lower_priority_queues),
            _priority_cause, _priority_remedy),
    Blocker("clwlmruc", (steps.keep_most_recently_used_channels,), _mruc_cause, _mruc_remedy),
)
OTHER = Blocker("other", (), _other_cause, _other_remedy)
UNREACHABLE = Blocker("unreachable", (), _unreachable_cause, _unreachable_remedy)
ZERO = Blocker("zero-target", (), _zero_cause, _zero_remedy)
PROFILE = Blocker("profile", (), _profile_cause, _profile_remedy)


def blocker_of(step: Step) -> Blocker:
    return next((b for b in BLOCKERS if any(step is s for s in b.steps)), OTHER)


def blocked_by(blocker: Blocker, e: Elimination, step_id: str) -> Blocked:
    return Blocked(e.qmgr, blocker.kind, step_id, blocker.cause(e), blocker.remedy(e))


def eliminations(view: ClusterView, queue: str, profile: str = "default"
                 ) -> tuple[dict[str, Elimination], Route | RouteError, set[str]]:
    """What the engine's explaining path does with one message to ``queue`` on ``view`` (steady: every channel
    running): per queue manager eliminated before step 12, the step that eliminated its last candidate; the
    result; and the queue managers with a candidate at all (reachable)."""
    request = Request(queue)
    found = resolve(view, request)
    by_label = {c.label: c for c in found.candidates} if isinstance(found, Candidates) else {}
    by_explanation = {st.explanation: st for st in PROFILES[profile]}
    result = Router(view, profile).route(request, explain=True)
    out: dict[str, Elimination] = {}
    alive = set(by_label)
    for entry in result.trace or ():
        st = by_explanation.get(entry.rule)
        if st is None or st.chooses_one or not entry.eliminated:
            continue  # start and notes; step 12's choice eliminates everyone else, and that is the rotation
        alive -= set(entry.eliminated)
        kept = tuple(by_label[x] for x in entry.remaining if x in by_label)
        gone = [by_label[x] for x in entry.eliminated if x in by_label]
        for qmgr in sorted({c.qmgr for c in gone}):
            out[qmgr] = Elimination(view, queue, qmgr, st, tuple(c for c in gone if c.qmgr == qmgr), kept)
    # A queue manager keeps its place while one of its channels is left (step 11 drops only some of them).
    left = {by_label[x].qmgr for x in alive}
    return {q: e for q, e in out.items() if q not in left}, result, {c.qmgr for c in by_label.values()}

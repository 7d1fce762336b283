"""The cluster workload management (CLWL) algorithm as an ordered tuple of small, named steps.

Each step takes the remaining candidates and returns the ones it keeps, or ``None`` when it does not
apply. A profile is just such a tuple (like sqlglot's optimizer RULES), applied in turn by
``clwl.engine.router.Router``; the record of what each step eliminated is the ``--explain`` trace, and the step
after which one candidate remained is ``decided_by``.

Everything the engine needs to know about a step is a field of its ``Step`` (its explanation, the replay's
stay reason, whether it reads the routing state, whether it is an eligibility step, whether the router's
fast path may step over it or does it): the router and the replay ask the step, never its name or number.

The default profile follows ``docs/algorithm.md`` step by step. Where that document leaves a point
open, the reading of ``cli-contract.md`` is applied and cited at the step ("reading N").

Candidates are destinations: the local instance of a queue (no channel), or a cluster-sender channel to
a queue manager together with the queue instance (or queue manager alias) it reaches there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from clwl.engine.model import ClusterChannel, ClusterView, QueueInstance, state_tier
from clwl.engine.state import LOCAL_KEY, RoutingState

# Reason codes (IBM MQ constants) a put can fail with.
MQRC_UNKNOWN_OBJECT_NAME = ("MQRC_UNKNOWN_OBJECT_NAME", 2085)
MQRC_UNKNOWN_REMOTE_Q_MGR = ("MQRC_UNKNOWN_REMOTE_Q_MGR", 2087)
MQRC_CLUSTER_PUT_INHIBITED = ("MQRC_CLUSTER_PUT_INHIBITED", 2268)
MQRC_NO_DESTINATIONS_AVAILABLE = ("MQRC_NO_DESTINATIONS_AVAILABLE", 2270)


@dataclass(frozen=True)
class Candidate:
    qmgr: str
    channel: Optional[ClusterChannel]  # None: the local instance
    instance: Optional[QueueInstance]  # the queue instance or queue manager alias reached; None: a QM

    @property
    def local(self) -> bool:
        return self.channel is None

    @property
    def key(self) -> str:
        """Key of the routing state (DestSeqFactor/Number): the channel, shared by every queue."""
        return LOCAL_KEY if self.channel is None else self.channel.name

    @property
    def channel_name(self) -> str:
        return "" if self.channel is None else self.channel.name

    @property
    def label(self) -> str:
        return f"{self.qmgr}/local" if self.channel is None else f"{self.qmgr}/{self.channel.name}"

    @property
    def tie_key(self) -> tuple[str, str]:
        """The one order for ties the algorithm leaves open (11c, and step 12 after DestSeqFactor and
        DestSeqNumber): queue manager name, then channel name, ascending (docs/algorithm.md, readings)."""
        return self.qmgr, self.channel_name

    @property
    def is_qmgr_alias(self) -> bool:
        return self.instance is not None and self.instance.qmgr_alias


@dataclass(frozen=True)
class Request:
    """What is being routed: one message as the algorithm sees it."""

    queue: str
    target_qmgr: Optional[str] = None  # the application named the target queue manager
    from_cluster_channel: bool = False
    pcf: bool = False
    size: int = 0


@dataclass
class Context:
    view: ClusterView
    request: Request
    state: RoutingState
    choosing_qmgr: bool  # "a queue manager is being chosen" (steps 2, 11a) vs a queue (1, 3, 4b, 11b)
    tier_done: bool = False  # steps 6-9: a tier already kept something
    notes: list[str] = field(default_factory=list)


StepFn = Callable[[list[Candidate], Context], Optional[list[Candidate]]]
# The numbers behind a step's decision, for --explain: (the candidates in front of it, context) -> text.
NumbersFn = Callable[[list[Candidate], Context], str]


@dataclass(frozen=True)
class Step:
    """One step of a profile with everything the engine knows about it."""

    id: str  # as numbered in docs/algorithm.md: "1", "4a", "12", ...
    name: str  # what the step does (its function's name); for people only, nothing looks it up
    apply: StepFn
    explanation: str  # its line in the --explain trace
    stay_reason: str  # replay: why a message this step decided stays behind its stopped channel
    # The step reads the routing state: what it decides can change from one message to the next, so the
    # router's fast path caches nothing past it.
    reads_state: bool = False
    # The step applies to cluster PCF messages only: for any other message it keeps every candidate and
    # reads nothing.
    pcf_only: bool = False
    # Steps 1 and 2 say which destinations are possible at all: they always run in full, even in front of a
    # single candidate, because a lone ineligible destination means the put fails.
    eligibility: bool = False
    # The MQ reason when this step leaves no candidate at all (a PUT(DISABLED) step: the put fails).
    empty_reason: tuple[str, int] = MQRC_NO_DESTINATIONS_AVAILABLE
    numbers: Optional[NumbersFn] = None  # the numbers behind its decision, shown with it in --explain
    # For a step that reads the routing state: true when, for these candidates, it keeps them all whatever
    # the state (11c with no more channels than CLWLMRUC). The fast path may then step over it.
    idle_when: Optional[Callable[[list[Candidate], ClusterView], bool]] = None
    # The step always leaves exactly one candidate (step 12): what it eliminates is everyone else, so the
    # route's summary leaves its eliminations out.
    chooses_one: bool = False
    # The router's least-recently-used heap does exactly this step (lowest RoutingState.sort_key, then
    # Candidate.tie_key; the chosen destination's factor grows by 1000/CLWLWGHT).
    heap_choice: bool = False

    def cacheable(self, request: Request) -> bool:
        """What this step decides for ``request`` depends on the view alone, not on the routing state: the
        fast path may cache its outcome and go on past it."""
        return not self.reads_state or (self.pcf_only and not request.pcf)

    def idle(self, cands: list[Candidate], view: ClusterView) -> bool:
        """It keeps every one of ``cands`` whatever the routing state (only then may the fast path skip it)."""
        return self.idle_when is not None and self.idle_when(cands, view)


def step(id: str, explanation: str, stay_reason: str, **metadata):
    """Make a function over the candidate list a Step, its metadata given once, here."""
    def wrap(fn: StepFn) -> Step:
        return Step(id, fn.__name__, fn, explanation, stay_reason, **metadata)

    return wrap


# Stay reasons shared by the variants of one step.
STAY_ONLY_ELIGIBLE = "the only eligible instance (step 1)"
STAY_NAMED_QMGR = "the only channel to the named queue manager (step 2)"
STAY_LOCAL = "the local instance is used (step 3)"
STAY_LEAST_RECENTLY_USED = "least recently used (step 12)"


def _keep_max(cands: list[Candidate], value, among) -> list[Candidate]:
    """Keep candidates not in ``among`` and, of those in it, the ones with the highest ``value``."""
    scored = [c for c in cands if among(c)]
    if not scored:
        return cands
    top = max(value(c) for c in scored)
    return [c for c in cands if not among(c) or value(c) == top]


def _remote(c: Candidate) -> bool:
    return c.channel is not None


def _queue_candidate(c: Candidate) -> bool:
    return c.instance is not None and not c.instance.qmgr_alias


# The numbers behind a decision, shown with the step in --explain.
def _channel_numbers(attr: str) -> NumbersFn:
    def numbers(before, ctx):
        return "; ".join(f"{c.label} {attr.upper()}={getattr(c.channel, attr)}" for c in before if c.channel)

    return numbers


def _queue_numbers(attr: str) -> NumbersFn:
    def numbers(before, ctx):
        return "; ".join(f"{c.label} queue {attr.upper()}={getattr(c.instance, attr)}" for c in before
                         if c.instance)

    return numbers


def _channel_states(before, ctx) -> str:
    return "; ".join(f"{c.label} {c.channel.state}" for c in before if c.channel)


def _suspended(before, ctx) -> str:
    return "; ".join(f"{c.label} SUSPEND={'YES' if c.channel.suspended else 'NO'}" for c in before if c.channel)


def _mruc(before, ctx) -> str:
    return f"CLWLMRUC({ctx.view.qmgr.clwlmruc})"


def _sequence(before, ctx) -> str:
    s = ctx.state
    return "; ".join(f"{c.label} DestSeqFactor={float(s.factor(c.key)):g} DestSeqNumber={s.seq_number(c.key)}"
                     for c in before)


# ---------------------------------------------------------------------------------------------------------
# Step 1: a queue name is specified
# ---------------------------------------------------------------------------------------------------------
@step("1", "queues that are not PUT enabled are eliminated", STAY_ONLY_ELIGIBLE, eligibility=True,
      empty_reason=MQRC_CLUSTER_PUT_INHIBITED)
def eliminate_put_disabled_queues(cands, ctx):
    if ctx.choosing_qmgr:
        return None
    return [c for c in cands if c.instance is None or c.instance.put_enabled]


@step("1", "remote instances of queues that do not share a cluster with the local queue manager are eliminated",
      STAY_ONLY_ELIGIBLE, eligibility=True)
def eliminate_queues_not_sharing_a_cluster(cands, ctx):
    if ctx.choosing_qmgr:
        return None
    mine = ctx.view.local_clusters
    if not mine:  # no CLUSRCVR of the local queue manager captured: nothing to compare with
        ctx.notes.append("step 1: the local queue manager's clusters are unknown (no CLUSRCVR record)")
        return None
    return [c for c in cands if c.local or (c.instance is not None and c.instance.clusters & mine)]


@step("1", "remote CLUSRCVR channels that are not in the same cluster as the queue are eliminated",
      STAY_ONLY_ELIGIBLE, eligibility=True)
def eliminate_channels_not_in_queue_cluster(cands, ctx):
    if ctx.choosing_qmgr:
        return None
    return [c for c in cands if c.local or c.instance is None or c.channel.clusters & c.instance.clusters]


# ---------------------------------------------------------------------------------------------------------
# Step 2: a queue manager name is specified
# ---------------------------------------------------------------------------------------------------------
@step("2", "queue manager aliases that are not PUT enabled are eliminated", STAY_NAMED_QMGR, eligibility=True,
      empty_reason=MQRC_CLUSTER_PUT_INHIBITED)
def eliminate_put_disabled_qmgr_aliases(cands, ctx):
    if not ctx.choosing_qmgr:
        return None
    return [c for c in cands if not c.is_qmgr_alias or c.instance.put_enabled]


@step("2", "remote CLUSRCVR channels that are not in the same cluster as the local queue manager are eliminated",
      STAY_NAMED_QMGR, eligibility=True)
def eliminate_channels_not_in_local_cluster(cands, ctx):
    if not ctx.choosing_qmgr:
        return None
    mine = ctx.view.local_clusters
    if not mine:
        ctx.notes.append("step 2: the local queue manager's clusters are unknown (no CLUSRCVR record)")
        return None
    return [c for c in cands if c.local or c.channel.clusters & mine]


# ---------------------------------------------------------------------------------------------------------
# Step 3: the local instance
# ---------------------------------------------------------------------------------------------------------
def _local_useq(ctx: Context, c: Candidate) -> str:
    q = c.instance.clwluseq if c.instance else "QMGR"
    return ctx.view.qmgr.clwluseq if q == "QMGR" else q


@step("3", "the local instance is chosen when CLWLUSEQ resolves to LOCAL, or the message arrived over a "
      "cluster channel", STAY_LOCAL)
def choose_local_instance(cands, ctx):
    if ctx.choosing_qmgr:
        return None
    local = [c for c in cands if c.local]
    if not local:
        return None
    if ctx.request.from_cluster_channel or _local_useq(ctx, local[0]) == "LOCAL":
        return local
    q = local[0].instance.clwluseq if local[0].instance else "QMGR"
    ctx.notes.append(f"the queue's CLWLUSEQ({q})" + (f" defers to the queue manager's CLWLUSEQ("
                     f"{ctx.view.qmgr.clwluseq})" if q == "QMGR" else "")
                     + " and the message was put locally: the local instance competes with the others")
    return None


@step("3", "if the result contains the local instance of the queue, it is chosen", STAY_LOCAL)
def choose_local_instance_always(cands, ctx):
    # docs/algorithm.md (legacy profile) step 3: before CLWLUSEQ existed the local instance always won.
    local = [c for c in cands if c.local]
    return local or None


# ---------------------------------------------------------------------------------------------------------
# Step 4: cluster PCF messages
# ---------------------------------------------------------------------------------------------------------
@step("4", "for a cluster PCF message, queue managers already sent a publication or subscription are "
      "eliminated", "cluster PCF routing (step 4)", reads_state=True, pcf_only=True)
def eliminate_qmgrs_already_sent_pcf(cands, ctx):
    if not ctx.request.pcf:
        return None
    kept = [c for c in cands if c.local or c.qmgr not in ctx.state.pcf_sent]
    if not kept:
        # Every remaining queue manager has had it already; the reference does not say the put fails,
        # so nothing is eliminated (a reading this project documents in the README).
        ctx.notes.append("step 4: every remaining queue manager was already sent a PCF message; none eliminated")
        return None
    return kept


# ---------------------------------------------------------------------------------------------------------
# Steps 4a, 4b: rank
# ---------------------------------------------------------------------------------------------------------
@step("4a", "channels (and queue manager aliases) with a CLWLRANK below the highest remaining are eliminated",
      "channel CLWLRANK (step 4a): rank is taken before channel state", numbers=_channel_numbers("clwlrank"))
def eliminate_lower_ranked_channels(cands, ctx):
    # Reading 2: the local instance has no channel and is never removed by a channel step.
    kept = _keep_max(cands, lambda c: c.channel.clwlrank, _remote)
    return _keep_max(kept, lambda c: c.instance.clwlrank, lambda c: c.is_qmgr_alias)


@step("4b", "queues (not queue manager aliases) with a CLWLRANK below the highest remaining are eliminated",
      "queue CLWLRANK (step 4b): rank is taken before channel state", numbers=_queue_numbers("clwlrank"))
def eliminate_lower_ranked_queues(cands, ctx):
    if ctx.choosing_qmgr:
        return None
    return _keep_max(cands, lambda c: c.instance.clwlrank, _queue_candidate)


# ---------------------------------------------------------------------------------------------------------
# Step 5: suspended queue managers
# ---------------------------------------------------------------------------------------------------------
@step("5", "if only remote instances remain, resumed queue managers are chosen over suspended ones",
      "the other queue managers are suspended (step 5)", numbers=_suspended)
def prefer_resumed_qmgrs(cands, ctx):
    if any(c.local for c in cands):  # reading 3: only while no local instance remains
        if any(c.channel is not None and c.channel.suspended for c in cands):
            ctx.notes.append("a local instance remains, so suspended queue managers are not avoided")
        return None
    resumed = [c for c in cands if not c.channel.suspended]
    return resumed or None


# ---------------------------------------------------------------------------------------------------------
# Steps 6-9: channel state tiers (reading 1)
# ---------------------------------------------------------------------------------------------------------
def _tier_step(tier: int) -> StepFn:
    def keep_tier(cands, ctx):
        if ctx.tier_done or len(cands) <= 1:
            return None
        # The local instance is a destination without a channel: it counts with the best tier.
        kept = [c for c in cands if (0 if c.local else state_tier(c.channel.state)) == tier]
        if not kept:
            return None
        ctx.tier_done = True
        return kept

    return keep_tier


include_inactive_or_running = Step(
    "6", "include_inactive_or_running", _tier_step(0), "channels that are INACTIVE or RUNNING are included",
    "channel state (step 6)", numbers=_channel_states)
include_binding_to_stopping = Step(
    "7", "include_binding_to_stopping", _tier_step(1),
    "else channels BINDING, INITIALIZING, STARTING or STOPPING are included", "channel state (step 7)",
    numbers=_channel_states)
include_retrying = Step(
    "8", "include_retrying", _tier_step(2), "else channels RETRYING are included",
    "channel state: every other channel is no better (step 8)", numbers=_channel_states)
include_requesting_paused_stopped = Step(
    "9", "include_requesting_paused_stopped", _tier_step(3),
    "else channels REQUESTING, PAUSED or STOPPED (or any other state) are included",
    "channel state: every other channel is no better (step 9)", numbers=_channel_states)


# ---------------------------------------------------------------------------------------------------------
# Steps 10, 11, 11a, 11b
# ---------------------------------------------------------------------------------------------------------
@step("10", "for a cluster PCF message, locally defined CLUSSDR channels are chosen",
      "locally defined CLUSSDR for PCF (step 10)", pcf_only=True)
def choose_manual_clussdr_for_pcf(cands, ctx):
    if not ctx.request.pcf or len(cands) <= 1:
        return None
    manual = [c for c in cands if c.local or c.channel.manual]
    if not any(_remote(c) for c in manual):
        return None
    return manual


@step("11", "for each queue manager, the channels with the highest NETPRTY are chosen", "NETPRTY (step 11)",
      numbers=_channel_numbers("netprty"))
def choose_highest_netprty_per_qmgr(cands, ctx):
    if len(cands) <= 1:
        return None
    best: dict[str, int] = {}
    for c in cands:
        if c.channel is not None:
            best[c.qmgr] = max(best.get(c.qmgr, c.channel.netprty), c.channel.netprty)
    return [c for c in cands if c.local or c.channel.netprty == best[c.qmgr]]


@step("11a", "channels (and queue manager aliases) other than those with the highest CLWLPRTY are eliminated",
      "channel CLWLPRTY (step 11a)", numbers=_channel_numbers("clwlprty"))
def eliminate_lower_priority_channels(cands, ctx):
    # Reading 4: channel CLWLPRTY applies when a queue is being chosen too.
    if len(cands) <= 1:
        return None
    kept = _keep_max(cands, lambda c: c.channel.clwlprty, _remote)
    return _keep_max(kept, lambda c: c.instance.clwlprty, lambda c: c.is_qmgr_alias)


@step("11b", "queues other than those with the highest CLWLPRTY are eliminated", "queue CLWLPRTY (step 11b)",
      numbers=_queue_numbers("clwlprty"))
def eliminate_lower_priority_queues(cands, ctx):
    if ctx.choosing_qmgr or len(cands) <= 1:
        return None
    return _keep_max(cands, lambda c: c.instance.clwlprty, _queue_candidate)


# ---------------------------------------------------------------------------------------------------------
# Steps 11c, 12: the routing state
# ---------------------------------------------------------------------------------------------------------
def _within_mruc(cands: list[Candidate], view: ClusterView) -> bool:
    """No more channels than CLWLMRUC: 11c keeps them all, whatever their DestSeqNumbers."""
    return len({c.key for c in cands if c.channel is not None}) <= view.qmgr.clwlmruc


@step("11c", "all but the CLWLMRUC channels with the highest DestSeqNumber are eliminated", "CLWLMRUC (step 11c)",
      reads_state=True, idle_when=_within_mruc, numbers=_mruc)
def keep_most_recently_used_channels(cands, ctx):
    if _within_mruc(cands, ctx.view):
        return None
    state = ctx.state
    # One candidate per channel (a channel leads to one queue manager), most recently used first.
    channels = {c.key: c for c in cands if c.channel is not None}
    by_recency = sorted(channels.values(), key=lambda c: (-state.seq_number(c.key), c.tie_key))
    keep = {c.key for c in by_recency[:ctx.view.qmgr.clwlmruc]}
    return [c for c in cands if c.local or c.key in keep]


def least_recently_used_order(cands: list[Candidate], state: RoutingState) -> list[Candidate]:
    """Step 12's order: lowest DestSeqFactor, then lowest DestSeqNumber, then the tie order."""
    return sorted(cands, key=lambda c: (state.sort_key(c.key), c.tie_key))


@step("12", "the least recently used channel is chosen: lowest DestSeqFactor, then lowest DestSeqNumber",
      STAY_LEAST_RECENTLY_USED, reads_state=True, numbers=_sequence, chooses_one=True, heap_choice=True)
def choose_least_recently_used(cands, ctx):
    if len(cands) <= 1:
        return None
    return least_recently_used_order(cands, ctx.state)[:1]


@step("12", "the least recently used channel is chosen (lowest DestSeqNumber)", STAY_LEAST_RECENTLY_USED,
      reads_state=True, numbers=_sequence, chooses_one=True)
def choose_least_recently_used_legacy(cands, ctx):
    # docs/algorithm.md (legacy profile) predates CLWLWGHT: plain round robin on the last-used sequence number.
    if len(cands) <= 1:
        return None
    state = ctx.state
    return sorted(cands, key=lambda c: (state.seq_number(c.key), c.tie_key))[:1]


# The later IBM MQ ordering (8.0 and 9.x; docs/algorithm.md, profiles) eliminates PUT(DISABLED) instances
# after rank, and only while an enabled one remains; if none is enabled the put fails (2268).
@step("1", "PUT(DISABLED) queues are eliminated while a PUT(ENABLED) one remains", STAY_ONLY_ELIGIBLE,
      eligibility=True, empty_reason=MQRC_CLUSTER_PUT_INHIBITED)
def eliminate_put_disabled_while_enabled_remain(cands, ctx):
    if ctx.choosing_qmgr:
        return None
    return [c for c in cands if c.instance is None or c.instance.put_enabled]


# ---------------------------------------------------------------------------------------------------------
# Profiles
# ---------------------------------------------------------------------------------------------------------
DEFAULT: tuple[Step, ...] = (
    eliminate_put_disabled_queues,
    eliminate_queues_not_sharing_a_cluster,
    eliminate_channels_not_in_queue_cluster,
    eliminate_put_disabled_qmgr_aliases,
    eliminate_channels_not_in_local_cluster,
    choose_local_instance,
    eliminate_qmgrs_already_sent_pcf,
    eliminate_lower_ranked_channels,
    eliminate_lower_ranked_queues,
    prefer_resumed_qmgrs,
    include_inactive_or_running,
    include_binding_to_stopping,
    include_retrying,
    include_requesting_paused_stopped,
    choose_manual_clussdr_for_pcf,
    choose_highest_netprty_per_qmgr,
    eliminate_lower_priority_channels,
    eliminate_lower_priority_queues,
    keep_most_recently_used_channels,
    choose_least_recently_used,
)

LEGACY: tuple[Step, ...] = (
    eliminate_put_disabled_queues,
    eliminate_queues_not_sharing_a_cluster,
    eliminate_channels_not_in_queue_cluster,
    eliminate_put_disabled_qmgr_aliases,
    eliminate_channels_not_in_local_cluster,
    choose_local_instance_always,
    eliminate_qmgrs_already_sent_pcf,
    prefer_resumed_qmgrs,
    include_inactive_or_running,
    include_binding_to_stopping,
    include_retrying,
    include_requesting_paused_stopped,
    choose_manual_clussdr_for_pcf,
    choose_highest_netprty_per_qmgr,
    choose_least_recently_used_legacy,
)

MQ9: tuple[Step, ...] = (
    eliminate_queues_not_sharing_a_cluster,
    eliminate_channels_not_in_queue_cluster,
    eliminate_put_disabled_qmgr_aliases,
    eliminate_channels_not_in_local_cluster,
    eliminate_lower_ranked_channels,
    eliminate_lower_ranked_queues,
    eliminate_put_disabled_while_enabled_remain,
    choose_local_instance,
    eliminate_qmgrs_already_sent_pcf,
    prefer_resumed_qmgrs,
    include_inactive_or_running,
    include_binding_to_stopping,
    include_retrying,
    include_requesting_paused_stopped,
    choose_manual_clussdr_for_pcf,
    choose_highest_netprty_per_qmgr,
    eliminate_lower_priority_channels,
    eliminate_lower_priority_queues,
    keep_most_recently_used_channels,
    choose_least_recently_used,
)

PROFILES: dict[str, tuple[Step, ...]] = {"default": DEFAULT, "legacy": LEGACY, "mq9": MQ9}
PROFILE_DOCS = {
    "default": "docs/algorithm.md: steps 1-12 with 4a/4b/11a-c, CLWLUSEQ, CLWLMRUC, CLWLWGHT",
    "legacy": "docs/algorithm.md (legacy profile): before the CLWL attributes; the local instance always wins, "
              "round robin over the rest (no rank, priority, weight or CLWLMRUC)",
    "mq9": "IBM MQ 8.0/9.x ordering (docs/algorithm.md, profiles): rank before the local-instance rule, "
           "PUT(DISABLED) eliminated after rank and only while an enabled instance remains",
}

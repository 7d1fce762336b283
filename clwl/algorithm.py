"""The cluster workload management (CLWL) algorithm as an ordered tuple of small, named steps.

Each step takes the remaining candidates and returns the ones it keeps, or ``None`` when it does not
apply. A profile is just such a tuple (like sqlglot's optimizer RULES), applied in turn by
``clwl.router.Router``; the record of what each step eliminated is the ``--explain`` trace, and the step
after which one candidate remained is ``decided_by``.

The default profile follows ``docs/algorithm.md`` step by step. Where that document leaves a point
open, the reading of ``cli-contract.md`` is applied and cited at the step ("reading N").

Candidates are destinations: the local instance of a queue (no channel), or a cluster-sender channel to
a queue manager together with the queue instance (or queue manager alias) it reaches there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from clwl.model import ClusterChannel, ClusterView, QueueInstance, state_tier
from clwl.state import LOCAL_KEY, RoutingState


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
        # Ties the algorithm leaves open: queue manager name, then channel name, ascending (contract).
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
    weight_of: Callable[[Candidate], int] = lambda c: 50


StepFn = Callable[[list[Candidate], Context], Optional[list[Candidate]]]


@dataclass(frozen=True)
class Step:
    id: str  # as numbered in docs/algorithm.md: "1", "4a", "12", ...
    name: str  # the function's name, what the step does
    rule: str  # one line for the trace
    fn: StepFn
    stateful: bool = False  # depends on the routing state (cannot be cached between messages)
    # The MQ reason when this step leaves no candidate at all (a PUT(DISABLED) step: the put fails).
    empty_reason: tuple[str, int] = ("MQRC_NO_DESTINATIONS_AVAILABLE", 2270)

    def __call__(self, cands: list[Candidate], ctx: Context) -> Optional[list[Candidate]]:
        return self.fn(cands, ctx)

    @property
    def eligibility(self) -> bool:
        """Steps 1 and 2 say which destinations are possible at all: they always run in full, even in front
        of a single candidate, because a lone ineligible destination means the put fails."""
        return self.id in ("1", "2")


PUT_INHIBITED = ("MQRC_CLUSTER_PUT_INHIBITED", 2268)


def step(id: str, rule: str, stateful: bool = False, empty_reason=None):
    def wrap(fn: StepFn) -> Step:
        if empty_reason:
            return Step(id, fn.__name__, rule, fn, stateful, empty_reason)
        return Step(id, fn.__name__, rule, fn, stateful)

    return wrap


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


# ---------------------------------------------------------------------------------------------------------
# Step 1: a queue name is specified
# ---------------------------------------------------------------------------------------------------------
@step("1", "queues that are not PUT enabled are eliminated", empty_reason=PUT_INHIBITED)
def eliminate_put_disabled_queues(cands, ctx):
    if ctx.choosing_qmgr:
        return None
    return [c for c in cands if c.instance is None or c.instance.put_enabled]


@step("1", "remote instances of queues that do not share a cluster with the local queue manager are eliminated")
def eliminate_queues_not_sharing_a_cluster(cands, ctx):
    if ctx.choosing_qmgr:
        return None
    mine = ctx.view.local_clusters
    if not mine:  # no CLUSRCVR of the local queue manager captured: nothing to compare with
        ctx.notes.append("step 1: the local queue manager's clusters are unknown (no CLUSRCVR record)")
        return None
    return [c for c in cands if c.local or (c.instance is not None and c.instance.clusters & mine)]


@step("1", "remote CLUSRCVR channels that are not in the same cluster as the queue are eliminated")
def eliminate_channels_not_in_queue_cluster(cands, ctx):
    if ctx.choosing_qmgr:
        return None
    return [c for c in cands if c.local or c.instance is None or c.channel.clusters & c.instance.clusters]


# ---------------------------------------------------------------------------------------------------------
# Step 2: a queue manager name is specified
# ---------------------------------------------------------------------------------------------------------
@step("2", "queue manager aliases that are not PUT enabled are eliminated", empty_reason=PUT_INHIBITED)
def eliminate_put_disabled_qmgr_aliases(cands, ctx):
    if not ctx.choosing_qmgr:
        return None
    return [c for c in cands if not c.is_qmgr_alias or c.instance.put_enabled]


@step("2", "remote CLUSRCVR channels that are not in the same cluster as the local queue manager are eliminated")
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
      "cluster channel")
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


@step("3", "if the result contains the local instance of the queue, it is chosen")
def choose_local_instance_always(cands, ctx):
    # docs/algorithm.md (legacy profile) step 3: before CLWLUSEQ existed the local instance always won.
    local = [c for c in cands if c.local]
    return local or None


# ---------------------------------------------------------------------------------------------------------
# Step 4: cluster PCF messages
# ---------------------------------------------------------------------------------------------------------
@step("4", "for a cluster PCF message, queue managers already sent a publication or subscription are "
      "eliminated", stateful=True)
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
@step("4a", "channels (and queue manager aliases) with a CLWLRANK below the highest remaining are eliminated")
def eliminate_lower_ranked_channels(cands, ctx):
    # Reading 2: the local instance has no channel and is never removed by a channel step.
    kept = _keep_max(cands, lambda c: c.channel.clwlrank, _remote)
    return _keep_max(kept, lambda c: c.instance.clwlrank, lambda c: c.is_qmgr_alias)


@step("4b", "queues (not queue manager aliases) with a CLWLRANK below the highest remaining are eliminated")
def eliminate_lower_ranked_queues(cands, ctx):
    if ctx.choosing_qmgr:
        return None
    return _keep_max(cands, lambda c: c.instance.clwlrank, _queue_candidate)


# ---------------------------------------------------------------------------------------------------------
# Step 5: suspended queue managers
# ---------------------------------------------------------------------------------------------------------
@step("5", "if only remote instances remain, resumed queue managers are chosen over suspended ones")
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
    "6", "include_inactive_or_running", "channels that are INACTIVE or RUNNING are included", _tier_step(0))
include_binding_to_stopping = Step(
    "7", "include_binding_to_stopping", "else channels BINDING, INITIALIZING, STARTING or STOPPING are included",
    _tier_step(1))
include_retrying = Step("8", "include_retrying", "else channels RETRYING are included", _tier_step(2))
include_requesting_paused_stopped = Step(
    "9", "include_requesting_paused_stopped",
    "else channels REQUESTING, PAUSED or STOPPED (or any other state) are included", _tier_step(3))


# ---------------------------------------------------------------------------------------------------------
# Steps 10, 11, 11a, 11b
# ---------------------------------------------------------------------------------------------------------
@step("10", "for a cluster PCF message, locally defined CLUSSDR channels are chosen")
def choose_manual_clussdr_for_pcf(cands, ctx):
    if not ctx.request.pcf or len(cands) <= 1:
        return None
    manual = [c for c in cands if c.local or c.channel.manual]
    if not any(_remote(c) for c in manual):
        return None
    return manual


@step("11", "for each queue manager, the channels with the highest NETPRTY are chosen")
def choose_highest_netprty_per_qmgr(cands, ctx):
    if len(cands) <= 1:
        return None
    best: dict[str, int] = {}
    for c in cands:
        if c.channel is not None:
            best[c.qmgr] = max(best.get(c.qmgr, c.channel.netprty), c.channel.netprty)
    return [c for c in cands if c.local or c.channel.netprty == best[c.qmgr]]


@step("11a", "channels (and queue manager aliases) other than those with the highest CLWLPRTY are eliminated")
def eliminate_lower_priority_channels(cands, ctx):
    # Reading 4: channel CLWLPRTY applies when a queue is being chosen too.
    if len(cands) <= 1:
        return None
    kept = _keep_max(cands, lambda c: c.channel.clwlprty, _remote)
    return _keep_max(kept, lambda c: c.instance.clwlprty, lambda c: c.is_qmgr_alias)


@step("11b", "queues other than those with the highest CLWLPRTY are eliminated")
def eliminate_lower_priority_queues(cands, ctx):
    if ctx.choosing_qmgr or len(cands) <= 1:
        return None
    return _keep_max(cands, lambda c: c.instance.clwlprty, _queue_candidate)


# ---------------------------------------------------------------------------------------------------------
# Steps 11c, 12: the routing state
# ---------------------------------------------------------------------------------------------------------
@step("11c", "all but the CLWLMRUC channels with the highest DestSeqNumber are eliminated", stateful=True)
def keep_most_recently_used_channels(cands, ctx):
    mruc = ctx.view.qmgr.clwlmruc
    channels = {c.key for c in cands if c.channel is not None}
    if len(channels) <= mruc:
        return None
    seq = ctx.state.seq
    by_recency = sorted({(c.key, c.qmgr) for c in cands if c.channel is not None},
                        key=lambda kq: (-seq.get(kq[0], 0), kq[1], kq[0]))
    keep = {k for k, _ in by_recency[:mruc]}
    return [c for c in cands if c.local or c.key in keep]


def least_recently_used_order(cands: list[Candidate], state: RoutingState) -> list[Candidate]:
    num, seq = state.numerators, state.seq
    return sorted(cands, key=lambda c: (num.get(c.key, 0), seq.get(c.key, 0), c.qmgr, c.channel_name))


@step("12", "the least recently used channel is chosen: lowest DestSeqFactor, then lowest DestSeqNumber",
      stateful=True)
def choose_least_recently_used(cands, ctx):
    if len(cands) <= 1:
        return None
    return least_recently_used_order(cands, ctx.state)[:1]


@step("12", "the least recently used channel is chosen (lowest DestSeqNumber)", stateful=True)
def choose_least_recently_used_legacy(cands, ctx):
    # docs/algorithm.md (legacy profile) predates CLWLWGHT: plain round robin on the last-used sequence number.
    if len(cands) <= 1:
        return None
    seq = ctx.state.seq
    return sorted(cands, key=lambda c: (seq.get(c.key, 0), c.qmgr, c.channel_name))[:1]


# The later IBM MQ ordering (8.0 and 9.x; mq-domain-notes section 4) eliminates PUT(DISABLED) instances
# after rank, and only while an enabled one remains; if none is enabled the put fails (2268).
@step("1", "PUT(DISABLED) queues are eliminated while a PUT(ENABLED) one remains", empty_reason=PUT_INHIBITED)
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
    "mq9": "IBM MQ 8.0/9.x ordering (mq-domain-notes section 4): rank before the local-instance rule, "
           "PUT(DISABLED) eliminated after rank and only while an enabled instance remains",
}

"""CLWLWGHT values for a target share of one cluster queue, from one sending queue manager (``clwl advise``).

Step 12 alone deciding (clwl/engine/shares.py), the share of a destination queue manager is the sum of the CLWLWGHT of
its channels in the rotation over the sum of every candidate's: weights can only split what step 12 shares
out. So the advice has four parts, all asked of the engine, none re-derived here:

1. **Who is in step 12**: the engine's own prepared candidates (``Router.lru_prepared`` on the steady view,
   every channel running: long-run shares do not depend on today's outages).
2. **The weights**: a small search over integer weights 1-99 (:func:`choose_totals`) for the target proportions
   among those queue managers, then the view with the new weights (``dataclasses.replace`` of the channels) and
   :func:`clwl.engine.shares.engine_shares` on it for the shares achieved. The other cluster queues the sender routes
   are asked the same before and after: a weight belongs to a channel and every queue over it shares it.
3. **What blocks the target**: the engine's explaining path for one message names the step that eliminated each
   destination before step 12 (clwl/analyses/advise_blocks.py, ``BLOCKERS``: one entry per kind of step), with the
   attributes of the view that made it so and what to change instead.
4. **The commands**: ``ALTER CHANNEL(name) CHLTYPE(CLUSRCVR) CLWLWGHT(n)`` on each destination queue manager,
   as text. The weight the sender uses is the one the destination's cluster receiver advertises (what the
   sender's DISPLAY CLUSQMGR shows; docs/algorithm.md, pitfall 1), so the command goes to the destination.

The replay of a lake's day with the proposed weights is clwl/analyses/advise_replay.py. Pure Python; no lake is read
here.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Callable, Mapping, Optional

from clwl.analyses.advise_blocks import (
    PROFILE,
    UNREACHABLE,
    ZERO,
    Blocked,
    Elimination,
    blocked_by,
    blocker_of,
    eliminations,
)
from clwl.engine.algorithm import Candidate, Request
from clwl.engine.candidates import known_queue_names
from clwl.engine.model import ClusterChannel, ClusterView
from clwl.engine.router import RouteError, Router
from clwl.engine.shares import engine_shares, steady

MIN_WEIGHT, MAX_WEIGHT = 1, 99  # CLWLWGHT's range (MQ refuses anything else)
#: Targets must add up to 100 within this (percentage points): 33.33 + 33.33 + 33.34 is fine, 33 + 33 + 33 not.
TARGET_SUM_TOLERANCE = 0.01
#: Two shares (percent) closer than this are the same share (the engine's counted shares are multiples of 0.1).
SAME_SHARE = 1e-9
_QMGR_NAME = re.compile(r"\A[A-Za-z0-9._/%]{1,48}\Z")
#: A share as --target takes it: ASCII digits, a decimal point at most (no sign, exponent, underscore or other
#: script's digits).
_SHARE = re.compile(r"\A(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")


class AdviseError(ValueError):
    """Input the advice cannot use: one line naming the argument and the reason."""


# -- the target -------------------------------------------------------------------------------------------------
def parse_target(text: str) -> dict[str, float]:
    """``QM2=50,QM3=25,QM4=25`` -> {"QM2": 50.0, ...}: percentages of at least 0 that add up to 100."""
    target: dict[str, float] = {}
    for part in text.split(","):
        name, eq, value = part.strip().partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name or not value:
            raise AdviseError(f"--target: {part.strip()!r} is not QMGR=PERCENT (e.g. QM2=50,QM3=25,QM4=25)")
        if not _QMGR_NAME.match(name):
            raise AdviseError(f"--target: {name!r} is not a queue manager name")
        if not _SHARE.match(value):  # not float(): it takes '١٠٠', '1_00', '1e-400', 'inf'
            raise AdviseError(f"--target: {name}={value}: {value!r} is not a number (a share is written in ASCII "
                              f"decimals: 25 or 33.33)")
        share = float(value)
        if share > 100:
            raise AdviseError(f"--target: {name}={value}: a share is a percentage from 0 to 100")
        if name in target:
            raise AdviseError(f"--target: {name} is given twice")
        target[name] = share
    total = sum(target.values())
    if abs(total - 100) > TARGET_SUM_TOLERANCE:
        raise AdviseError(f"--target: the shares add up to {total:g}, not 100")
    return target


def cluster_queue(view: ClusterView, queue: str) -> str:
    """The cluster queue ``queue`` names on the sending queue manager (a local alias: its target, as the put
    resolves it), or AdviseError when the view knows no instance of it."""
    if view.instances_of(queue):
        return queue
    alias = view.alias(queue)
    if alias is not None and view.instances_of(alias.target):
        return alias.target
    raise AdviseError(f"--queue: {queue} is not a cluster queue known to {view.local_name} (no instance in its "
                      f"DISPLAY QCLUSTER output); {known_queue_names(view)}")


def check_target(view: ClusterView, queue: str, target: Mapping[str, float]) -> None:
    """AdviseError when ``target`` names a queue manager that hosts no instance of ``queue``."""
    name = cluster_queue(view, queue)
    hosts = {i.qmgr for i in view.instances_of(name)}
    for qmgr in target:
        if qmgr not in hosts:
            raise AdviseError(f"--target: {qmgr} hosts no instance of {name} (instances: {', '.join(sorted(hosts))})")


# -- the result -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Weight:
    """One channel in step 12's rotation for the queue: the weight it has and the weight proposed."""

    qmgr: str  # the destination queue manager
    channel: str  # its cluster receiver (the sending queue manager's own, for the local instance)
    owner: str  # the queue manager that owns the CLUSRCVR: where the ALTER runs
    current: int
    clwlwght: int

    def as_dict(self) -> dict:
        return {"qmgr": self.qmgr, "channel": self.channel, "clwlwght": self.clwlwght, "current": self.current}

    @property
    def command(self) -> str:
        return f"ALTER CHANNEL({self.channel}) CHLTYPE(CLUSRCVR) CLWLWGHT({self.clwlwght})"


@dataclass(frozen=True)
class SideEffect:
    """Another cluster queue whose shares from the sending queue manager change with the proposed weights."""

    queue: str
    before: dict[str, float]
    after: dict[str, float]

    def as_dict(self) -> dict:
        return {"queue": self.queue, "before": rounded(self.before), "after": rounded(self.after)}


@dataclass(frozen=True)
class SenderEffect:
    """Another sending queue manager's shares of one cluster queue, before and after the proposed weights: a
    cluster receiver advertises one CLWLWGHT to every sender, so each one that routes over a changed channel moves
    too."""

    sender: str
    queue: str
    before: dict[str, float]
    after: dict[str, float]
    channels: tuple[str, ...]  # the changed channels this sender's rotation for the queue weighs

    def as_dict(self) -> dict:
        return {"sender": self.sender, "queue": self.queue, "before": rounded(self.before),
                "after": rounded(self.after), "channels": list(self.channels)}


@dataclass
class Advice:
    sender: str
    queue: str  # the cluster queue (an alias resolved)
    profile: str
    target: dict[str, float]  # as given; queue managers not named: 0
    proposal: list[Weight]
    current: dict[str, float]  # the engine's shares now
    achieved: dict[str, float]  # the engine's shares with the proposal
    exact: bool  # step 12 alone decides: the shares are exactly weight over total (else counted)
    side_effects: list[SideEffect] = field(default_factory=list)
    blocked: list[Blocked] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Every other sender's queues whose shares change (other_senders); None: no other sender's captures were read.
    other_senders: Optional[list[SenderEffect]] = None
    other_senders_from: str = ""  # where the other senders' captures came from (and which senders they were)

    @property
    def destinations(self) -> list[str]:
        """Every queue manager hosting an instance, named in the target, or given a share."""
        return sorted(set(self.target) | set(self.current) | set(self.achieved) | {w.qmgr for w in self.proposal})

    @property
    def residual(self) -> dict[str, float]:
        """Achieved less target, per queue manager (percentage points)."""
        return {q: self.achieved.get(q, 0.0) - self.target.get(q, 0.0) for q in self.destinations}

    @property
    def max_residual(self) -> float:
        return max((abs(r) for r in self.residual.values()), default=0.0)

    @property
    def changes(self) -> list[Weight]:
        """The proposed weights that differ from the current ones: the commands to run."""
        return [w for w in self.proposal if w.clwlwght != w.current]

    def weights(self) -> dict[str, int]:
        """Channel -> proposed CLWLWGHT, for the channels that change (a what-if's channel_attrs)."""
        return {w.channel: w.clwlwght for w in self.changes}

    def commands(self) -> list[dict]:
        return [{"qmgr": w.owner, "channel": w.channel, "command": w.command} for w in self.changes]

    def receiver_weights(self) -> dict[tuple[str, str], int]:
        """(owning queue manager, channel) -> proposed CLWLWGHT, for the channels that change: what every
        sender's view of those receivers becomes (:func:`with_receiver_weights`)."""
        return {(w.owner, w.channel): w.clwlwght for w in self.changes}

    def as_dict(self) -> dict:
        return {"queue": self.queue, "sender": self.sender, "profile": self.profile, "target": self.target,
                "proposal": [w.as_dict() for w in self.proposal], "current": rounded(self.current),
                "achieved": rounded(self.achieved), "exact": self.exact, "residual": rounded(self.residual),
                "max_residual": round(self.max_residual, 4),
                "side_effects": [s.as_dict() for s in self.side_effects],
                "blocked": [b.as_dict() for b in self.blocked], "commands": self.commands(), "notes": self.notes,
                "other_senders": (None if self.other_senders is None
                                  else [e.as_dict() for e in self.other_senders]),
                "other_senders_from": self.other_senders_from}


def rounded(shares: Mapping[str, float]) -> dict[str, float]:
    """Shares (percent) as the JSON prints them: four decimals, in name order."""
    return {q: round(v, 4) + 0.0 for q, v in sorted(shares.items())}  # + 0.0: no -0.0 in the output


# -- 1. step 12's candidates and their channels -----------------------------------------------------------------
def weighted_channel(view: ClusterView, cand: Candidate) -> Optional[ClusterChannel]:
    """The channel whose CLWLWGHT step 12 counts for ``cand``: its cluster-sender channel (carrying what the
    destination's CLUSRCVR advertises), or for the local instance the sending queue manager's own CLUSRCVR
    (docs/algorithm.md, reading 2), the one the router weighs (``ClusterView.local_receiver``). None: no
    receiver captured (the engine then counts 50, which no command changes)."""
    if cand.channel is not None:
        return cand.channel
    return view.local_receiver(cand.instance)


def with_weights(view: ClusterView, weights: Mapping[str, int]) -> ClusterView:
    """``view`` with the CLWLWGHT of the named channels (cluster senders and the sender's own receivers)
    replaced: the configuration the proposal would make."""
    def swap(channels: tuple[ClusterChannel, ...]) -> tuple[ClusterChannel, ...]:
        return tuple(replace(c, clwlwght=weights[c.name]) if c.name in weights else c for c in channels)

    return replace(view, channels=swap(view.channels), local_receivers=swap(view.local_receivers))


def with_receiver_weights(view: ClusterView, weights: Mapping[tuple[str, str], int]) -> ClusterView:
    """``view`` (any sender's) with the CLWLWGHT of the cluster receivers ``weights`` names by (owning queue
    manager, channel): its cluster-sender channels to them carry what they advertise, and its own receivers are
    its own. The configuration the proposal makes, as that sender sees it."""
    def swap(channels: tuple[ClusterChannel, ...], owner: Optional[str]) -> tuple[ClusterChannel, ...]:
        return tuple(replace(c, clwlwght=weights[key]) if (key := (owner or c.qmgr, c.name)) in weights else c
                     for c in channels)

    return replace(view, channels=swap(view.channels, None),
                   local_receivers=swap(view.local_receivers, view.local_name))


# -- 2. the search ----------------------------------------------------------------------------------------------
def _nearest(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


def choose_totals(targets: Mapping[str, Fraction], ranges: Mapping[str, tuple[int, int]],
                  current: Mapping[str, int],
                  touched: Optional[Callable[[frozenset[str]], int]] = None) -> dict[str, int]:
    """Per queue manager, the total CLWLWGHT of its channels in step 12 whose shares (total over the sum of
    totals) come closest to ``targets`` (percent, summing to 100), each total within its ``ranges`` (1-99 per
    channel: one channel 1-99, two channels 2-198; a fixed weight is a range of one value). ``touched``: how many
    other queues run over the channels of the queue managers whose total changes (none without it).

    The search, and why this one: the queue manager with the largest target (the anchor) takes every total its
    range allows, the others its multiple by their target proportion, rounded to the nearest whole weight and
    kept in range. The proportions fix the weights up to this one scale, so trying every scale tries every
    candidate the rounding can give; at most 99 per channel of the anchor, each checked exactly (fractions).
    Best: the smallest largest residual, then the smallest sum of residuals, then the fewest other queues over
    changed channels (their shares move too), then the fewest queue managers changed (an exact current setting
    is kept), then the sum of weights nearest today's (these channels keep their weight against every other
    channel), then the smaller sum (the shares hold exactly after every sum-many messages)."""
    anchor = max(sorted(targets), key=lambda q: targets[q])
    today = sum(current[q] for q in targets)
    best: Optional[tuple] = None
    chosen: dict[str, int] = dict(current)
    lo, hi = ranges[anchor]
    for scale in range(lo, hi + 1):
        totals = {q: scale if q == anchor else min(max(_nearest(scale * targets[q] / targets[anchor]),
                                                       ranges[q][0]), ranges[q][1]) for q in targets}
        whole = sum(totals.values())
        misses = [abs(Fraction(100 * totals[q], whole) - targets[q]) for q in targets]
        changed = frozenset(q for q in targets if totals[q] != current[q])
        key = (max(misses), sum(misses), touched(changed) if touched else 0, len(changed), abs(whole - today), whole)
        if best is None or key < best:
            best, chosen = key, totals
    return chosen


def split_total(total: int, current: list[int]) -> list[int]:
    """A queue manager's total over its channels (in name order): the current weights when they already make
    it, else as even as whole weights allow (the first channels one more)."""
    if sum(current) == total:
        return list(current)
    base, extra = divmod(total, len(current))
    return [base + (1 if i < extra else 0) for i in range(len(current))]


# -- 4. the advice ----------------------------------------------------------------------------------------------
def advise(view: ClusterView, queue: str, target: Mapping[str, float], profile: str = "default") -> Advice:
    """The weights that bring ``queue``'s shares from ``view``'s queue manager closest to ``target`` (queue
    manager -> percent, adding up to 100; a hosting queue manager not named: 0), checked by the engine. Raises
    AdviseError for a target :func:`check_target` refuses."""
    check_target(view, queue, target)
    name = cluster_queue(view, queue)
    hosts = sorted({i.qmgr for i in view.instances_of(name)})
    target = {q: float(target.get(q, 0.0)) for q in sorted(set(hosts) | set(target))}
    now = steady(view)
    current = engine_shares(now, queue, profile)
    advice = Advice(view.local_name, name, profile, target, [], current, current, False)

    gone, result, reachable = eliminations(now, queue, profile)
    prep = Router(now, profile).lru_prepared(Request(queue))
    in_rotation = sorted({c.qmgr for c in prep.cands}) if prep is not None else []
    for qmgr in hosts:
        if qmgr not in reachable:
            e = Elimination(now, name, qmgr, None, target=target[qmgr])
            if target[qmgr] > 0:
                advice.blocked.append(blocked_by(UNREACHABLE, e, "-"))
            else:
                advice.notes.append(f"{qmgr} takes nothing, as the target asks ({UNREACHABLE.cause(e)})")
    for qmgr, e in sorted(gone.items()):
        if target.get(qmgr, 0.0) > 0:
            advice.blocked.append(blocked_by(blocker_of(e.step), replace(e, target=target[qmgr]), e.step.id))
        else:
            advice.notes.append(f"{qmgr} takes nothing, as the target asks (step {e.step.id}: "
                                f"{blocker_of(e.step).cause(e)})")
    if isinstance(result, RouteError):
        advice.notes.append(f"a put to {queue} on {view.local_name} fails: {result.error} ({result.reason}): "
                            f"{result.detail}")
        return advice
    if prep is None:
        decided = result.decided_step
        if decided is not None and decided.reads_state and not decided.heap_choice:
            e = Elimination(now, name, None, decided)
            advice.blocked.append(blocked_by(PROFILE, e, decided.id))
        advice.exact = False
        return advice

    # Step 12 decides among these: the search over their weights.
    channels: dict[str, list[Optional[ClusterChannel]]] = {}
    for cand in prep.cands:
        channels.setdefault(cand.qmgr, []).append(weighted_channel(now, cand))
    share = {q: Fraction(str(target.get(q, 0.0))) for q in in_rotation}
    now_totals = {q: sum(c.clwlwght if c is not None else w for c, w in zip(channels[q], _weights(prep, q)))
                  for q in in_rotation}
    if sum(share.values()) == 0:
        totals = now_totals  # everything asked for is blocked: nothing for weights to do
    else:
        whole = sum(share.values())
        ranges = {q: _range(channels[q], now_totals[q]) for q in in_rotation}
        users = channel_users(now, name, profile)
        touched = functools.lru_cache(maxsize=None)(
            lambda qmgrs: len({u for q in qmgrs for c in channels[q] if c is not None for u in users.get(c.name, ())}))
        totals = choose_totals({q: 100 * share[q] / whole for q in in_rotation}, ranges, now_totals, touched)
    proposed: dict[str, int] = {}
    for qmgr in in_rotation:
        movable = sorted((c for c in channels[qmgr] if c is not None), key=lambda c: c.name)
        fixed = sum(w for c, w in zip(channels[qmgr], _weights(prep, qmgr)) if c is None)
        if not movable:
            continue
        for ch, w in zip(movable, split_total(totals[qmgr] - fixed, [c.clwlwght for c in movable])):
            proposed[ch.name] = w
            advice.proposal.append(Weight(qmgr, ch.name, ch.qmgr, ch.clwlwght, w))
    after = with_weights(now, proposed)
    advice.achieved = engine_shares(after, queue, profile)
    advice.exact = Router(after, profile).lru_prepared(Request(queue)) is not None
    for qmgr in in_rotation:
        if target.get(qmgr, 0.0) == 0:
            e = Elimination(now, name, qmgr, None, tuple(c for c in prep.cands if c.qmgr == qmgr),
                            target=target.get(qmgr, 0.0))
            advice.blocked.append(blocked_by(ZERO, e, "12"))
    advice.side_effects = side_effects(now, after, name, profile) if advice.changes else []
    return advice


def channel_users(view: ClusterView, queue: str, profile: str = "default") -> dict[str, set[str]]:
    """Channel -> the other cluster queues whose step-12 rotation from ``view``'s queue manager weighs it."""
    users: dict[str, set[str]] = {}
    for other in sorted({i.queue for i in view.instances} - {queue}):
        prep = Router(view, profile).lru_prepared(Request(other))
        for cand in prep.cands if prep is not None else ():
            ch = weighted_channel(view, cand)
            if ch is not None:
                users.setdefault(ch.name, set()).add(other)
    return users


def _weights(prep, qmgr: str) -> list[int]:
    """The engine's own step-12 weights of ``qmgr``'s candidates (in candidate order)."""
    return [w for c, w in zip(prep.cands, prep.weights) if c.qmgr == qmgr]


def _range(channels: list[Optional[ClusterChannel]], total_now: int) -> tuple[int, int]:
    """The totals a queue manager's channels can make: 1-99 each; a channel no command can change keeps its
    weight."""
    fixed = total_now - sum(c.clwlwght for c in channels if c is not None)
    movable = sum(1 for c in channels if c is not None)
    return fixed + MIN_WEIGHT * movable, fixed + MAX_WEIGHT * movable


def side_effects(before: ClusterView, after: ClusterView, queue: str, profile: str = "default") -> list[SideEffect]:
    """Every other cluster queue of the view whose engine shares change from ``before`` to ``after``."""
    out = []
    for other in sorted({i.queue for i in before.instances} - {queue}):
        was, now = engine_shares(before, other, profile), engine_shares(after, other, profile)
        if any(abs(was.get(q, 0.0) - now.get(q, 0.0)) > SAME_SHARE for q in set(was) | set(now)):
            out.append(SideEffect(other, was, now))
    return out


def other_senders(views: Mapping[str, ClusterView], weights: Mapping[tuple[str, str], int],
                  profile: str = "default") -> list[SenderEffect]:
    """For each sender's view (sending queue manager -> its ClusterView), every cluster queue whose engine shares
    (every channel running) change when the receivers ``weights`` names (:meth:`Advice.receiver_weights`) take
    their proposed CLWLWGHT: the shares before and after, and which of the changed channels its rotation weighs."""
    out: list[SenderEffect] = []
    changed = {name for _, name in weights}
    for sender, view in sorted(views.items()):
        after = with_receiver_weights(view, weights)
        if after == view:
            continue  # none of the changed receivers is in this sender's view
        before_v, after_v = steady(view), steady(after)
        for queue in sorted({i.queue for i in view.instances}):
            was, now = engine_shares(before_v, queue, profile), engine_shares(after_v, queue, profile)
            if not any(abs(was.get(q, 0.0) - now.get(q, 0.0)) > SAME_SHARE for q in set(was) | set(now)):
                continue
            prep = Router(before_v, profile).lru_prepared(Request(queue))
            weighed = {ch.name for c in (prep.cands if prep is not None else ())
                       if (ch := weighted_channel(before_v, c)) is not None} & changed
            out.append(SenderEffect(sender, queue, was, now, tuple(sorted(weighed))))
    return out

"""Route messages through a CLWL profile, carrying the routing state from message to message.

Two paths that must agree (a property test checks it):
- the explaining path runs every step of the profile for every message and records the trace; it is the
  reference, and reads like the document;
- the fast path caches everything that does not change between messages (all steps up to the first one
  that reads the routing state) and does step 12 with a lazily refreshed heap over the remaining
  candidates, so a message costs a heap operation, not a pass over every step.

Which steps may be cached, which may be stepped over and which one the heap does are the steps' own metadata
(``clwl.engine.algorithm.Step``); the candidates come from ``clwl.engine.candidates``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field, replace
from typing import Optional, Union

from clwl.engine.algorithm import PROFILES, Candidate, Context, Request, Step
from clwl.engine.candidates import NoCandidates, queue_defbind, resolve
from clwl.engine.model import ClusterView
from clwl.engine.state import RoutingState
from clwl.engine.xmitq import delivery

BIND_OPTIONS = ("notfixed", "open", "group")
AS_Q_DEF = "as_q_def"  # the bind of an MQOPEN without MQOO_BIND_*: resolved from the view at the put


@dataclass(frozen=True)
class TraceEntry:
    step: str
    rule: str
    eliminated: tuple[str, ...]
    remaining: tuple[str, ...]
    note: str = ""

    def to_json(self) -> dict:
        d = {"step": self.step, "rule": self.rule, "eliminated": list(self.eliminated),
             "remaining": list(self.remaining)}
        if self.note:
            d["note"] = self.note
        return d


@dataclass(frozen=True)
class Route:
    queue: str
    qmgr: str
    channel: Optional[str]
    xmitq: Optional[str]
    path: str  # local | cluster | igq
    decided_by: str
    reallocatable: bool
    not_reallocatable_reason: Optional[str] = None  # bind-on-open | bind-on-group | named-qmgr
    bound: bool = False  # the destination was fixed by an earlier choice (bind on open / on group)
    trace: Optional[tuple[TraceEntry, ...]] = None
    why_xmitq: str = ""
    # Compact trace for tables: the steps that eliminated something, then the choice, e.g.
    # "6:-QM4/TO.QM4;12:=QM2/TO.QM2" (step 12's own eliminations are left out: they are everyone else).
    summary: str = ""
    # The step that decided (``decided_by`` is its number): what the replay asks for the stay reason.
    decided_step: Optional[Step] = field(default=None, compare=False, repr=False)

    error = None

    def to_json(self, n: int, explain: bool = False) -> dict:
        d = {"n": n, "queue": self.queue, "qmgr": self.qmgr, "channel": self.channel, "xmitq": self.xmitq,
             "path": self.path, "decided_by": self.decided_by, "reallocatable": self.reallocatable,
             "not_reallocatable_reason": self.not_reallocatable_reason, "bound": self.bound}
        if explain:
            d["trace"] = [t.to_json() for t in (self.trace or ())]
            d["xmitq_reason"] = self.why_xmitq
        return d


@dataclass(frozen=True)
class RouteError:
    queue: str
    error: str  # MQRC_... name
    reason: int  # MQ reason code
    detail: str = ""
    trace: Optional[tuple[TraceEntry, ...]] = None

    def to_json(self, n: int, explain: bool = False) -> dict:
        d = {"n": n, "queue": self.queue, "error": self.error, "reason": self.reason, "detail": self.detail}
        if explain:
            d["trace"] = [t.to_json() for t in (self.trace or ())]
        return d


Result = Union[Route, RouteError]


class _Prepared:
    """What the stateless prefix of the profile decided for one kind of request."""

    __slots__ = ("cands", "error", "decided_by", "ctx_tier_done", "rest", "heap", "heap_epoch", "incs",
                 "weights", "keys", "ties", "routes", "fast", "choice", "choosing_qmgr", "summary")

    def __init__(self) -> None:
        self.cands: list[Candidate] = []
        self.error: Optional[RouteError] = None
        self.decided_by: Optional[Step] = None
        self.ctx_tier_done = False
        self.rest: tuple[Step, ...] = ()
        self.heap: list = []
        self.heap_epoch = -1
        self.incs: list[int] = []
        self.weights: list[int] = []
        self.keys: list = []  # the candidates' routing-state keys, for choose_lru
        self.ties: list = []  # the candidates' tie keys, for choose_lru
        self.routes: dict = {}
        self.fast = False
        self.choice: Optional[Step] = None  # the step the heap does, when fast
        self.choosing_qmgr = False
        self.summary = ""


def _heap_does_the_rest(rest: tuple[Step, ...], cands: list[Candidate], view: ClusterView) -> bool:
    """The state-reading rest of a profile is one least-recently-used choice the router's heap does, after
    steps that keep these candidates whatever the state (11c within CLWLMRUC): then the fast path applies."""
    if not rest or not rest[-1].heap_choice:
        return False
    return all(st.idle(cands, view) for st in rest[:-1])


class Router:
    def __init__(self, view: ClusterView, profile: Union[str, tuple[Step, ...]] = "default",
                 state: Optional[RoutingState] = None):
        """``profile``: the name of one of PROFILES, or a tuple of steps of one's own."""
        if isinstance(profile, tuple):
            self.profile, self.steps = "custom", profile
        elif profile in PROFILES:
            self.profile, self.steps = profile, PROFILES[profile]
        else:
            raise ValueError(f"unknown algorithm profile {profile!r}; known: {', '.join(PROFILES)}")
        self.state = state if state is not None else RoutingState()
        self.view = view
        self.state.observe(view)
        self._prepared: dict[tuple, _Prepared] = {}
        self._bindings: dict[tuple, Route] = {}
        self._bound_copies: dict[tuple, tuple[Route, Route]] = {}

    # -- configuration changes ----------------------------------------------------------------------------
    def set_view(self, view: ClusterView) -> bool:
        """A new capture is in force: caches go, bindings stay (an open handle keeps its destination).
        Returns True when the new view reset the DestSeqFactors."""
        self.view = view
        self._prepared.clear()
        self._bound_copies.clear()
        return self.state.observe(view)

    def close_handle(self, handle: str) -> None:
        for k in [k for k in self._bindings if k[1] == handle]:
            del self._bindings[k]

    # -- public API ------------------------------------------------------------------------------------
    def route(self, request: Request, bind: str = "notfixed", handle: str = "", group_id: str = "",
              logical_order: bool = True, explain: bool = False) -> Result:
        if bind == AS_Q_DEF:  # MQOO_BIND_AS_Q_DEF (an activity-traced MQOPEN): the queue's DEFBIND decides
            bind = queue_defbind(self.view, request.queue)
        if bind not in BIND_OPTIONS:
            raise ValueError(f"bind must be one of {BIND_OPTIONS} or {AS_Q_DEF!r}, not {bind!r}")
        reason = not_reallocatable_reason(request, bind, group_id, logical_order)
        key = binding_key(request, bind, handle, group_id, logical_order)
        if key is not None and key in self._bindings:
            first = self._bindings[key]
            return self._bound_copy(first, request, explain)
        result = self._explain(request, reason) if explain else self._fast(request, reason)
        if key is not None and isinstance(result, Route):
            self._bindings[key] = result
        return result

    def peek(self, request: Request) -> Result:
        """What the algorithm would choose now, without counting it as a choice: the routing state is left
        exactly as it was. Re-allocation uses this: re-driving a waiting message moves it (or not), but
        neither the documents nor MQ's observable behaviour make it a new put that shifts the rotation."""
        st = self.state
        saved = (st.counter, dict(st.numerators), dict(st.seq), st.denom, st.epoch, set(st.pcf_sent))
        try:
            return self._explain(request, None)
        finally:
            st.counter, st.numerators, st.seq, st.denom, st.epoch, st.pcf_sent = saved

    def route_many(self, request: Request, count: int) -> list[Result]:
        """``count`` not-fixed messages of the same kind: the fast path in a tight loop."""
        prep = self._prepare(request)
        reason = not_reallocatable_reason(request, "notfixed", "", True)
        if prep.error is not None or prep.decided_by is not None or not prep.fast:
            return [self._fast(request, reason) for _ in range(count)]
        choose = self.choose_lru
        out = []
        append = out.append
        routes = prep.routes
        fits = request.size <= self.view.igq_max_message
        for _ in range(count):
            idx = choose(prep)
            r = routes.get((idx, reason, fits))
            if r is None:
                r = self._make_route(prep, idx, prep.choice, request, reason)
            append(r)
        return out

    # -- the plain least-recently-used choice, for callers that route many messages (clwl.engine.replay) -------------
    def lru_prepared(self, request: Request) -> Optional[_Prepared]:
        """The prepared request when a not-fixed message of this kind is decided by step 12 alone (no error, no
        earlier decision, nothing stateful before it): then ``choose_lru`` and ``lru_route`` do exactly what
        ``route(request)`` does (the fast path). None otherwise. Valid until the view changes."""
        prep = self._prepare(request)
        if prep.error is not None or prep.decided_by is not None or not prep.fast:
            return None
        return prep

    def lru_route(self, prep: _Prepared, idx: int, request: Request) -> Route:
        """The (cached) route to candidate ``idx`` of a not-fixed message."""
        return self._route_cached(prep, idx, prep.choice, request,
                                  not_reallocatable_reason(request, "notfixed", "", True))

    # -- the explaining (reference) path --------------------------------------------------------------------
    def _explain(self, request: Request, reason: Optional[str]) -> Result:
        found = resolve(self.view, request)
        if isinstance(found, NoCandidates):
            return _unresolved(found)
        cands = found.candidates
        trace: list[TraceEntry] = [TraceEntry("start", "candidates", (), _labels(cands), n) for n in found.notes]
        if not trace:
            trace.append(TraceEntry("start", "candidates", (), _labels(cands)))
        ctx = self._context(request, found.choosing_qmgr)
        run = run_steps(self.steps, cands, ctx, trace)
        if run.error is not None:
            return _left_nothing(request, run.error, tuple(trace))
        cands = run.cands
        # One candidate from the start and no applicable step: the first step of the profile already had a
        # single choice in front of it.
        decided = run.decided or self.steps[0]
        if ctx.notes:
            trace.append(TraceEntry("note", "; ".join(ctx.notes), (), _labels(cands)))
        chosen = cands[0]
        self._record(chosen, request, ctx)
        route = self._route_for(chosen, decided, request, reason, run.summary)
        return replace(route, trace=tuple(trace))

    # -- the fast path ------------------------------------------------------------------------------------
    def _fast(self, request: Request, reason: Optional[str]) -> Result:
        prep = self._prepare(request)
        if prep.error is not None:
            return prep.error
        if prep.decided_by is not None:
            chosen = prep.cands[0]
            self._record(chosen, request, None)
            return self._route_cached(prep, 0, prep.decided_by, request, reason)
        if prep.fast:
            idx = self.choose_lru(prep)
            return self._route_cached(prep, idx, prep.choice, request, reason)
        # The stateful rest of the profile (PCF messages, CLWLMRUC below the number of channels).
        ctx = self._context(request, prep.choosing_qmgr)
        ctx.tier_done = prep.ctx_tier_done
        run = run_steps(prep.rest, prep.cands, ctx)
        if run.error is not None:
            return _left_nothing(request, run.error)
        cands = run.cands
        decided = run.decided or self.steps[0]
        chosen = cands[0]
        self._record(chosen, request, ctx)
        return self._route_for(chosen, decided, request, reason, prep.summary)

    def _prepare(self, request: Request) -> _Prepared:
        # No step reads the message size (only the IGQ delivery does, and routes are cached per side of the
        # IGQ limit), so requests that differ only in size share one prepared prefix.
        key = (request.queue, request.target_qmgr, request.from_cluster_channel, request.pcf)
        prep = self._prepared.get(key)
        if prep is not None:
            return prep
        prep = _Prepared()
        self._prepared[key] = prep
        found = resolve(self.view, request)
        if isinstance(found, NoCandidates):
            prep.error = _unresolved(found)
            return prep
        prep.choosing_qmgr = found.choosing_qmgr
        ctx = self._context(request, found.choosing_qmgr)
        steps = self.steps
        stop = next((i for i, st in enumerate(steps) if not st.cacheable(request)), len(steps))
        # A trace only for the summary of what the cached prefix eliminated.
        run = run_steps(steps[:stop], found.candidates, ctx, [])
        prep.summary = run.summary
        if run.error is not None:
            prep.error = _left_nothing(request, run.error)
            return prep
        cands = prep.cands = run.cands
        if run.decided is not None:
            prep.decided_by = run.decided
            return prep
        prep.ctx_tier_done = ctx.tier_done
        prep.rest = steps[stop:]
        if len(cands) == 1:  # as in the explaining path: no step had anything to decide
            prep.decided_by = steps[0]
            return prep
        prep.fast = _heap_does_the_rest(prep.rest, cands, self.view)
        if prep.fast:
            prep.choice = prep.rest[-1]
            prep.weights = [self._weight(c) for c in cands]
            prep.keys = [c.key for c in cands]
            prep.ties = [c.tie_key for c in cands]
        return prep

    def choose_lru(self, prep: _Prepared) -> int:
        """Step 12 for a prepared request (``prep.fast``): the index of the chosen candidate; the state advances."""
        st = self.state
        num, seq = st.numerators, st.seq
        if prep.heap_epoch != st.epoch:
            for w in prep.weights:  # widen the common denominator first: that rescales every factor
                st.increment(w)
            prep.incs = [st.increment(w) for w in prep.weights]
            # Step 12's order: RoutingState.sort_key, then Candidate.tie_key, then the candidate order (as the
            # explaining path's stable sort keeps it).
            prep.heap = [(*st.sort_key(k), tie, i) for i, (k, tie) in enumerate(zip(prep.keys, prep.ties))]
            heapq.heapify(prep.heap)
            prep.heap_epoch = st.epoch
        heap = prep.heap
        keys = prep.keys
        while True:
            top = heap[0]
            k = keys[top[3]]
            # RoutingState.sort_key(k), inlined: a call per message costs a quarter of the throughput.
            n, s = num.get(k, 0), seq.get(k, 0)
            if n == top[0] and s == top[1]:
                break
            # Stale: another request routed over the same channel since (values only grow between resets).
            heapq.heapreplace(heap, (n, s, top[2], top[3]))
        idx = top[3]
        st.counter += 1
        c = st.counter
        n = top[0] + prep.incs[idx]
        num[k] = n
        seq[k] = c
        heapq.heapreplace(heap, (n, c, top[2], idx))
        return idx

    # -- pieces ----------------------------------------------------------------------------------------
    def _context(self, request: Request, choosing_qmgr: bool) -> Context:
        return Context(self.view, request, self.state, choosing_qmgr)

    def _weight(self, c: Candidate) -> int:
        if c.channel is not None:
            return c.channel.clwlwght
        return self.view.local_weight(c.instance)

    def _record(self, chosen: Candidate, request: Request, ctx: Optional[Context]) -> None:
        # Reading 5: the state advances on every choice, whichever step made it.
        self.state.record_choice(chosen.key, self._weight(chosen))
        if request.pcf and chosen.channel is not None:
            self.state.pcf_sent.add(chosen.qmgr)

    def _route_cached(self, prep: _Prepared, idx: int, decided: Step, request: Request,
                      reason: Optional[str]) -> Route:
        r = prep.routes.get((idx, reason, request.size <= self.view.igq_max_message))
        if r is None:
            r = self._make_route(prep, idx, decided, request, reason)
        return r

    def _make_route(self, prep: _Prepared, idx: int, decided: Step, request: Request,
                    reason: Optional[str]) -> Route:
        r = self._route_for(prep.cands[idx], decided, request, reason, prep.summary)
        # Only the side of the IGQ size limit matters to the route, not the size itself.
        prep.routes[(idx, reason, request.size <= self.view.igq_max_message)] = r
        return r

    def _route_for(self, c: Candidate, decided: Step, request: Request, reason: Optional[str],
                   summary: str = "") -> Route:
        d = delivery(self.view, c.qmgr, c.channel, request.size)
        summary = f"{summary};{decided.id}:={c.label}" if summary else f"{decided.id}:={c.label}"
        return Route(request.queue, c.qmgr, c.channel.name if c.channel else None, d.xmitq, d.path, decided.id,
                     reason is None, reason, why_xmitq=d.why, summary=summary, decided_step=decided)

    def _bound_copy(self, first: Route, request: Request, explain: bool) -> Route:
        if not explain:
            # One copy per binding and side of the IGQ limit while the view holds (``first`` is kept with it,
            # so its id is not reused): the replay then sees one result object, not one per message.
            key = (id(first), request.size <= self.view.igq_max_message)
            hit = self._bound_copies.get(key)
            if hit is not None and hit[0] is first:
                return hit[1]
            copy = self._bound_copy_of(first, request, False)
            self._bound_copies[key] = (first, copy)
            return copy
        return self._bound_copy_of(first, request, True)

    def _bound_copy_of(self, first: Route, request: Request, explain: bool) -> Route:
        trace = None
        if explain:
            trace = (TraceEntry("bind", f"bound: the destination chosen when the handle was opened (or the "
                                f"group started) is reused; step {first.decided_by} decided it",
                                (), (f"{first.qmgr}/{first.channel or 'local'}",)),)
        if first.channel is not None:  # the path still depends on this message's size (IGQ)
            ch = next((c for c in self.view.channels if c.name == first.channel), None)
            if ch is not None:
                d = delivery(self.view, first.qmgr, ch, request.size)
                if d.path != first.path or d.xmitq != first.xmitq:
                    first = replace(first, path=d.path, xmitq=d.xmitq, why_xmitq=d.why)
        return replace(first, bound=True, trace=trace)


def _unresolved(found: NoCandidates) -> RouteError:
    return RouteError(found.queue, found.error, found.reason, found.detail)


def _left_nothing(request: Request, st: Step, trace: Optional[tuple[TraceEntry, ...]] = None) -> RouteError:
    """The put fails: step ``st`` eliminated every candidate."""
    return RouteError(request.queue, st.empty_reason[0], st.empty_reason[1], f"step {st.id} left no destination",
                      trace)


@dataclass
class StepRun:
    cands: list[Candidate]
    decided: Optional[Step] = None  # the step after which one candidate remained
    error: Optional[Step] = None  # the step that left no candidate
    # With a trace: what the steps eliminated, e.g. "6:-QM4/TO.QM4" (the route's summary without its choice).
    summary: str = ""


def run_steps(steps: tuple[Step, ...], cands: list[Candidate], ctx: Context,
              trace: Optional[list[TraceEntry]] = None) -> StepRun:
    """Apply ``steps`` in order, as the reference lists them. Once one candidate remains the choice is made;
    only the eligibility steps (1, 2) still run, since a lone ineligible destination fails the put."""
    decided = None
    summary: list[str] = []
    for st in steps:
        if decided is not None and not st.eligibility:
            continue
        noted = len(ctx.notes)
        out = st.apply(cands, ctx)
        if out is None:
            if trace is not None and len(ctx.notes) > noted:  # why a step did not apply, where it says
                why = "; ".join(ctx.notes[noted:])
                del ctx.notes[noted:]
                trace.append(TraceEntry(st.id, st.explanation, (), _labels(cands), f"not applied: {why}"))
            continue
        if not out:
            if trace is not None:
                trace.append(TraceEntry(st.id, st.explanation, _labels(cands), ()))
            return StepRun([], decided, st)
        if trace is not None:
            keep = {id(c) for c in out}
            gone = tuple(c.label for c in cands if id(c) not in keep)
            numbers = st.numbers(cands, ctx) if st.numbers is not None else ""
            trace.append(TraceEntry(st.id, st.explanation, gone, _labels(out), numbers))
            if gone and not st.chooses_one:  # a choice eliminates everyone else: the summary says whom it chose
                summary.append(f"{st.id}:-{','.join(gone)}")
        cands = out
        if decided is None and len(cands) == 1:
            decided = st
    return StepRun(cands, decided, summary=";".join(summary))


def binding_key(request: Request, bind: str, handle: str, group_id: str, logical_order: bool) -> Optional[tuple]:
    """The binding a message shares with the earlier messages of its open handle (bind on open) or of its group
    (bind on group, in logical order): the first message's choice holds for every later one with the same key
    (:meth:`Router.route`). None: a message chosen on its own. ``bind`` is already resolved (not as_q_def)."""
    if bind == "open":
        return ("open", handle, request.queue, request.target_qmgr)
    if bind == "group" and logical_order and group_id:
        return ("group", handle, request.queue, request.target_qmgr, group_id)
    return None


def not_reallocatable_reason(request: Request, bind: str, group_id: str, logical_order: bool) -> Optional[str]:
    """Why the message's AccountingToken is all zeros (docs/algorithm.md, re-allocation), or None if eligible."""
    if request.target_qmgr:
        return "named-qmgr"
    if bind == "open":
        return "bind-on-open"
    if bind == "group" and logical_order and group_id:
        return "bind-on-group"
    return None


def _labels(cands: list[Candidate]) -> tuple[str, ...]:
    return tuple(c.label for c in cands)


"""Route messages through a CLWL profile, carrying the routing state from message to message.

Two paths that must agree (a property test checks it):
- the explaining path runs every step of the profile for every message and records the trace; it is the
  reference, and reads like the document;
- the fast path caches everything that does not change between messages (all steps up to the first one
  that reads the routing state) and does step 12 with a lazily refreshed heap over the remaining
  candidates, so a message costs a heap operation, not a pass over every step.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from typing import Optional, Union

from clwl.algorithm import PROFILES, Candidate, Context, Request, Step
from clwl.model import ClusterView, QueueInstance
from clwl.state import RoutingState
from clwl.xmitq import delivery

# Reason codes (IBM MQ constants) the router can answer with.
MQRC_UNKNOWN_OBJECT_NAME = ("MQRC_UNKNOWN_OBJECT_NAME", 2085)
MQRC_UNKNOWN_REMOTE_Q_MGR = ("MQRC_UNKNOWN_REMOTE_Q_MGR", 2087)
MQRC_NO_DESTINATIONS_AVAILABLE = ("MQRC_NO_DESTINATIONS_AVAILABLE", 2270)

BIND_OPTIONS = ("notfixed", "open", "group")


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
                 "weights", "keys", "routes", "fast", "choosing_qmgr", "summary")

    def __init__(self) -> None:
        self.cands: list[Candidate] = []
        self.error: Optional[RouteError] = None
        self.decided_by: Optional[str] = None
        self.ctx_tier_done = False
        self.rest: tuple[Step, ...] = ()
        self.heap: list = []
        self.heap_epoch = -1
        self.incs: list[int] = []
        self.weights: list[int] = []
        self.keys: list = []  # the candidates' routing-state keys, for choose_lru
        self.routes: dict = {}
        self.fast = False
        self.choosing_qmgr = False
        self.summary = ""


def _stateful_for(st: Step, req: Request) -> bool:
    if st.id == "4":  # the PCF step reads the state only for cluster PCF messages
        return req.pcf
    return st.stateful


class Router:
    def __init__(self, view: ClusterView, profile: str = "default", state: Optional[RoutingState] = None):
        if profile not in PROFILES:
            raise ValueError(f"unknown algorithm profile {profile!r}; known: {', '.join(PROFILES)}")
        self.profile = profile
        self.steps: tuple[Step, ...] = PROFILES[profile]
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
        if bind not in BIND_OPTIONS:
            raise ValueError(f"bind must be one of {BIND_OPTIONS}, not {bind!r}")
        reason = not_reallocatable_reason(request, bind, group_id, logical_order)
        key = None
        if bind == "open":
            key = ("open", handle, request.queue, request.target_qmgr)
        elif bind == "group" and logical_order and group_id:
            key = ("group", handle, request.queue, request.target_qmgr, group_id)
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
                r = self._make_route(prep, idx, "12", request, reason)
            append(r)
        return out

    # -- the plain least-recently-used choice, for callers that route many messages (clwl.replay) -------------
    def lru_prepared(self, request: Request) -> Optional[_Prepared]:
        """The prepared request when a not-fixed message of this kind is decided by step 12 alone (no error, no
        earlier decision, nothing stateful before it): then ``choose_lru`` and ``lru_route`` do exactly what
        ``route(request)`` does. None otherwise. Valid until the view changes."""
        prep = self._prepare(request)
        if prep.error is not None or prep.decided_by is not None or not prep.fast:
            return None
        return prep

    def lru_route(self, prep: _Prepared, idx: int, request: Request) -> Route:
        """The (cached) route to candidate ``idx`` of a not-fixed message."""
        return self._route_cached(prep, idx, "12", request, not_reallocatable_reason(request, "notfixed", "", True))

    # -- the explaining (reference) path --------------------------------------------------------------------
    def _explain(self, request: Request, reason: Optional[str]) -> Result:
        built = self._candidates(request)
        if isinstance(built, RouteError):
            return built
        cands, choosing_qmgr, pre_notes = built
        trace: list[TraceEntry] = [TraceEntry("start", "candidates", (), _labels(cands), n) for n in pre_notes]
        if not trace:
            trace.append(TraceEntry("start", "candidates", (), _labels(cands)))
        ctx = self._context(request, choosing_qmgr)
        run = run_steps(self.steps, cands, ctx, trace)
        if run.error is not None:
            st = run.error
            return RouteError(request.queue, st.empty_reason[0], st.empty_reason[1],
                              f"step {st.id} left no destination", tuple(trace))
        cands = run.cands
        # One candidate from the start and no applicable step: the first step of the profile already had a
        # single choice in front of it.
        decided = run.decided or self.steps[0].id
        if ctx.notes:
            trace.append(TraceEntry("note", "; ".join(ctx.notes), (), _labels(cands)))
        chosen = cands[0]
        self._record(chosen, request, ctx)
        route = self._route_for(chosen, decided, request, reason, _summary(trace))
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
            return self._route_cached(prep, idx, "12", request, reason)
        # The stateful rest of the profile (PCF messages, CLWLMRUC below the number of channels).
        ctx = self._context(request, prep.choosing_qmgr)
        ctx.tier_done = prep.ctx_tier_done
        run = run_steps(prep.rest, prep.cands, ctx)
        if run.error is not None:
            st = run.error
            return RouteError(request.queue, st.empty_reason[0], st.empty_reason[1],
                              f"step {st.id} left no destination")
        cands = run.cands
        decided = run.decided or self.steps[0].id
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
        built = self._candidates(request)
        if isinstance(built, RouteError):
            prep.error = built
            return prep
        cands, choosing_qmgr, _ = built
        prep.choosing_qmgr = choosing_qmgr
        ctx = self._context(request, choosing_qmgr)
        steps = self.steps
        stop = next((i for i, st in enumerate(steps) if _stateful_for(st, request)), len(steps))
        prefix_trace: list[TraceEntry] = []
        run = run_steps(steps[:stop], cands, ctx, prefix_trace)
        prep.summary = _summary(prefix_trace)
        if run.error is not None:
            st = run.error
            prep.error = RouteError(request.queue, st.empty_reason[0], st.empty_reason[1],
                                    f"step {st.id} left no destination")
            return prep
        cands = prep.cands = run.cands
        if run.decided is not None:
            prep.decided_by = run.decided
            return prep
        prep.ctx_tier_done = ctx.tier_done
        prep.rest = steps[stop:]
        if len(cands) == 1:  # as in the explaining path: no step had anything to decide
            prep.decided_by = steps[0].id
            return prep
        # Fast when what is left is "11c (inactive here) then 12": a plain least-recently-used choice.
        ids = [s.name for s in prep.rest]
        channels = {c.key for c in cands if c.channel is not None}
        mruc_inactive = len(channels) <= self.view.qmgr.clwlmruc
        prep.fast = (ids == ["keep_most_recently_used_channels", "choose_least_recently_used"]
                     and mruc_inactive) or ids == ["choose_least_recently_used"]
        if prep.fast:
            prep.weights = [self._weight(c) for c in cands]
            prep.keys = [c.key for c in cands]
        return prep

    def choose_lru(self, prep: _Prepared) -> int:
        """Step 12 for a prepared request (``prep.fast``): the index of the chosen candidate; the state advances."""
        st = self.state
        num, seq = st.numerators, st.seq
        if prep.heap_epoch != st.epoch:
            for w in prep.weights:  # widen the common denominator first: that rescales every factor
                st.increment(w)
            prep.incs = [st.increment(w) for w in prep.weights]
            prep.heap = [(num.get(c.key, 0), seq.get(c.key, 0), c.qmgr, c.channel_name, i)
                         for i, c in enumerate(prep.cands)]
            heapq.heapify(prep.heap)
            prep.heap_epoch = st.epoch
        heap = prep.heap
        keys = prep.keys
        while True:
            top = heap[0]
            k = keys[top[4]]
            n, s = num.get(k, 0), seq.get(k, 0)
            if n == top[0] and s == top[1]:
                break
            # Stale: another request routed over the same channel since (values only grow between resets).
            heapq.heapreplace(heap, (n, s, top[2], top[3], top[4]))
        idx = top[4]
        st.counter += 1
        c = st.counter
        n = top[0] + prep.incs[idx]
        num[k] = n
        seq[k] = c
        heapq.heapreplace(heap, (n, c, top[2], top[3], idx))
        return idx

    # -- pieces ----------------------------------------------------------------------------------------
    def _context(self, request: Request, choosing_qmgr: bool) -> Context:
        return Context(self.view, request, self.state, choosing_qmgr)

    def _weight(self, c: Candidate) -> int:
        if c.channel is not None:
            return c.channel.clwlwght
        clusters = c.instance.clusters if c.instance else frozenset()
        for r in self.view.local_receivers:
            if r.clusters & clusters:
                return r.clwlwght
        return self.view.local_receivers[0].clwlwght if self.view.local_receivers else 50

    def _record(self, chosen: Candidate, request: Request, ctx: Optional[Context]) -> None:
        # Reading 5: the state advances on every choice, whichever step made it.
        self.state.record_choice(chosen.key, self._weight(chosen))
        if request.pcf and chosen.channel is not None:
            self.state.pcf_sent.add(chosen.qmgr)

    def _route_cached(self, prep: _Prepared, idx: int, decided: str, request: Request,
                      reason: Optional[str]) -> Route:
        r = prep.routes.get((idx, reason, request.size <= self.view.igq_max_message))
        if r is None:
            r = self._make_route(prep, idx, decided, request, reason)
        return r

    def _make_route(self, prep: _Prepared, idx: int, decided: str, request: Request,
                    reason: Optional[str]) -> Route:
        r = self._route_for(prep.cands[idx], decided, request, reason, prep.summary)
        # Only the side of the IGQ size limit matters to the route, not the size itself.
        prep.routes[(idx, reason, request.size <= self.view.igq_max_message)] = r
        return r

    def _route_for(self, c: Candidate, decided: str, request: Request, reason: Optional[str],
                   summary: str = "") -> Route:
        d = delivery(self.view, c.qmgr, c.channel, request.size)
        summary = f"{summary};{decided}:={c.label}" if summary else f"{decided}:={c.label}"
        return Route(request.queue, c.qmgr, c.channel.name if c.channel else None, d.xmitq, d.path, decided,
                     reason is None, reason, why_xmitq=d.why, summary=summary)

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

    # -- candidates ----------------------------------------------------------------------------------------
    def _candidates(self, request: Request):
        """(candidates, choosing a queue manager?, notes) or a RouteError, before any step runs."""
        view = self.view
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
                return [Candidate(target, None, local)], True, notes
            aliases = [i for i in view.instances_of(target) if i.qmgr_alias]
            if aliases:
                return _with(self._instance_candidates(aliases, notes), True, notes)
            chans = view.channels_to(target)
            if not chans:
                return RouteError(queue, *MQRC_UNKNOWN_REMOTE_Q_MGR,
                                  f"queue manager {target} is not known to {view.local_name}")
            return [Candidate(target, ch, None) for ch in chans], True, notes
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
                return [Candidate(view.local_name, None, inst)], False, notes
            rem = view.remote(queue)
            if rem is not None and not rem.qmgr_alias and view.channels_to(rem.rqmname):
                notes.append(f"{queue} is a remote definition of {rem.rname} at {rem.rqmname}")
                return [Candidate(rem.rqmname, ch, None) for ch in view.channels_to(rem.rqmname)], True, notes
            return RouteError(queue, *MQRC_UNKNOWN_OBJECT_NAME,
                              f"{queue} is not a queue, alias or cluster queue known to {view.local_name}")
        if all(i.qmgr_alias for i in instances):
            notes.append(f"{queue} is a clustered queue manager alias")
            return _with(self._instance_candidates(instances, notes), True, notes)
        return _with(self._instance_candidates([i for i in instances if not i.qmgr_alias], notes), False, notes)

    def _instance_candidates(self, instances: list[QueueInstance], notes: list[str]):
        out = self._reachable(instances, notes)
        if not out:
            return RouteError(instances[0].queue, *MQRC_NO_DESTINATIONS_AVAILABLE,
                              "; ".join(notes) or "no instance is reachable")
        return out

    def _reachable(self, instances: list[QueueInstance], notes: list[str]) -> list[Candidate]:
        out: list[Candidate] = []
        for inst in sorted(instances, key=lambda i: i.qmgr):
            if inst.local or inst.qmgr == self.view.local_name:
                out.append(Candidate(inst.qmgr, None, inst))
                continue
            chans = self.view.channels_to(inst.qmgr)
            if not chans:
                notes.append(f"no channel to {inst.qmgr} is known: its instance of {inst.queue} is not reachable")
            for ch in sorted(chans, key=lambda c: c.name):
                out.append(Candidate(inst.qmgr, ch, inst))
        return out


def _with(cands, choosing_qmgr: bool, notes: list[str]):
    return cands if isinstance(cands, RouteError) else (cands, choosing_qmgr, notes)


@dataclass
class StepRun:
    cands: list[Candidate]
    decided: Optional[str] = None  # id of the step after which one candidate remained
    error: Optional[Step] = None  # the step that left no candidate


def run_steps(steps: tuple[Step, ...], cands: list[Candidate], ctx: Context,
              trace: Optional[list[TraceEntry]] = None) -> StepRun:
    """Apply ``steps`` in order, as the reference lists them. Once one candidate remains the choice is made;
    only the eligibility steps (1, 2) still run, since a lone ineligible destination fails the put."""
    decided = None
    for st in steps:
        if decided is not None and not st.eligibility:
            continue
        noted = len(ctx.notes)
        out = st(cands, ctx)
        if out is None:
            if trace is not None and len(ctx.notes) > noted:  # why a step did not apply, where it says
                why = "; ".join(ctx.notes[noted:])
                del ctx.notes[noted:]
                trace.append(TraceEntry(st.id, st.rule, (), _labels(cands), f"not applied: {why}"))
            continue
        if not out:
            if trace is not None:
                trace.append(TraceEntry(st.id, st.rule, _labels(cands), ()))
            return StepRun([], decided, st)
        if trace is not None:
            keep = {id(c) for c in out}
            gone = tuple(c.label for c in cands if id(c) not in keep)
            trace.append(TraceEntry(st.id, st.rule, gone, _labels(out), _step_note(st, cands, out, ctx)))
        cands = out
        if decided is None and len(cands) == 1:
            decided = st.id
    return StepRun(cands, decided)


def not_reallocatable_reason(request: Request, bind: str, group_id: str, logical_order: bool) -> Optional[str]:
    """Why the message's AccountingToken is all zeros (docs/algorithm.md, re-allocation), or None if eligible."""
    if request.target_qmgr:
        return "named-qmgr"
    if bind == "open":
        return "bind-on-open"
    if bind == "group" and logical_order and group_id:
        return "bind-on-group"
    return None


def _summary(trace: list[TraceEntry]) -> str:
    return ";".join(f"{t.step}:-{','.join(t.eliminated)}" for t in trace
                    if t.eliminated and t.step not in ("12", "start", "note"))


def _labels(cands: list[Candidate]) -> tuple[str, ...]:
    return tuple(c.label for c in cands)


def _step_note(st: Step, before: list[Candidate], after: list[Candidate], ctx: Context) -> str:
    """Numbers behind a step's decision, for the explanation."""
    if st.name in ("choose_least_recently_used", "choose_least_recently_used_legacy"):
        s = ctx.state
        parts = [f"{c.label} DestSeqFactor={float(s.factor(c.key)):g} DestSeqNumber={s.seq_number(c.key)}"
                 for c in before]
        return "; ".join(parts)
    if st.name == "keep_most_recently_used_channels":
        return f"CLWLMRUC({ctx.view.qmgr.clwlmruc})"
    if st.id in ("4a", "11a") and st.name.startswith("eliminate"):
        attr = "clwlrank" if st.id == "4a" else "clwlprty"
        return "; ".join(f"{c.label} {attr.upper()}={getattr(c.channel, attr)}" for c in before if c.channel)
    if st.id in ("4b", "11b"):
        attr = "clwlrank" if st.id == "4b" else "clwlprty"
        return "; ".join(f"{c.label} queue {attr.upper()}={getattr(c.instance, attr)}" for c in before
                         if c.instance)
    if st.id in ("6", "7", "8", "9"):
        return "; ".join(f"{c.label} {c.channel.state}" for c in before if c.channel)
    if st.id == "11":
        return "; ".join(f"{c.label} NETPRTY={c.channel.netprty}" for c in before if c.channel)
    if st.id == "5":
        return "; ".join(f"{c.label} SUSPEND={'YES' if c.channel.suspended else 'NO'}" for c in before
                         if c.channel)
    return ""

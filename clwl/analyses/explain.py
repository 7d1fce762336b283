"""``clwl explain MSG_ID``: one replayed message step by step, from the lake, without Spark.

1. The message's row in gold.routing_replay, at its published version (clwl/lake/published.py), found by ``msg_id``
   (a Delta statistics column, so deltalake skips the files whose range cannot hold it).
2. Its sender's configuration timeline from silver history (:func:`clwl.lake.silver.load_timelines`) and its
   sender's day of silver.message_events, in put order (:func:`clwl.lake.silver.sender_batches`: the files of that
   one partition, sorted as the pipeline's replay sorts them).
3. That day replayed in-process up to the message (``SenderReplay.put_batch``, the pipeline's own fast path),
   so the routing state (DestSeqFactor / DestSeqNumber, bindings) is what the message met; the message itself
   through the router's explaining path, which moves the state exactly as the fast path does (clwl/engine/router.py).
4. When it waited on a transmission queue, the replay goes on until its fate is known, recording each time
   its channel was seen not moving (re-allocated where and why, or stayed why) and when it was released.
5. Its flow across queue managers, where it was traced (clwl.analyses.observed.message_flow over the day's
   bronze.activity_operations rows naming its id): the put, the channel agent's get from the transmission
   queue, the receiving agent's put, an application's get; and gold.routing_replay's timing verdict.

The fate printed is gold.routing_replay's row; the replay here is checked against it (first destination, the
re-allocations, where it ended) and any difference is reported: a lake re-ingested or replayed with another
profile or code since the publish can differ. Nothing here needs Spark: the lake is read with deltalake and
pyarrow (imported when read), the routing is the engine's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterator, Optional

from clwl.analyses.observed import FlowStep, message_flow, message_operations
from clwl.days import as_utc, day_bounds, run_day
from clwl.engine.algorithm import Request
from clwl.engine.replay import PutEvent, ReplayRow, SenderReplay, Snapshot
from clwl.engine.router import Route, RouteError
from clwl.lake.door import LakeFileError, is_delta_table, snapshot
from clwl.lake.published import PublishedError, read_published
from clwl.lake.silver import batch_event, load_timelines, put_columns, put_event, sender_batches, sender_inputs
from clwl.lake.storage import lake_root

#: The gold.routing_replay columns that tell what became of a message after its put.
FATE_COLUMNS = ("held", "held_from", "hold_state", "reallocations", "final_qmgr", "final_channel", "final_xmitq",
                "stay_reason", "stay_detail", "released_at", "delivered_at", "observed_qmgr", "observed_xmitq",
                "agrees", "observed_left_at", "observed_arrived_at", "observed_arrived_qmgr", "timing_agrees",
                "timing_cause", "timing_note")


class ExplainError(Exception):
    """The message cannot be explained (not found, ambiguous, no lake): one line for stderr."""


@dataclass(frozen=True)
class Reexamination:
    """One time the replay saw the channel the message waited behind not moving messages (docs/algorithm.md,
    "Binding and re-allocation"): the message stayed, or was re-allocated."""

    at: datetime
    channel: str  # the channel it waited behind
    state: str  # that channel's state in the capture of ``at``
    moved: bool  # re-allocated to another destination
    to_qmgr: Optional[str]
    to_channel: Optional[str]
    waits_again: bool  # re-allocated to a channel that is not moving messages either
    stay_reason: Optional[str]
    stay_detail: Optional[str]
    redriven: Optional[Route | RouteError]  # the algorithm driven again (None: not eligible, not re-driven)

    def to_json(self) -> dict:
        d = {"at": _iso(self.at), "channel": self.channel, "state": self.state, "moved": self.moved,
             "to_qmgr": self.to_qmgr, "to_channel": self.to_channel, "waits_again": self.waits_again,
             "stay_reason": self.stay_reason, "stay_detail": self.stay_detail}
        if self.redriven is not None:
            d["redriven"] = self.redriven.to_json(1, True)
        return d


@dataclass
class Explanation:
    run_date: str
    sending_qmgr: str
    msg_id: str
    row: dict  # the gold.routing_replay row
    routing_replay_version: Optional[int]  # the published version read (None: the latest, no pointer file)
    event: Optional[PutEvent] = None  # the message as silver.message_events has it
    result: Optional[Route | RouteError] = None  # the explained route (None: no configuration to route with)
    config_time: Optional[datetime] = None
    state_before: dict[str, tuple[str, int]] = field(default_factory=dict)  # channel -> (DestSeqFactor, Number)
    earlier_messages: int = 0  # the sender's messages of the day replayed before this one
    reexaminations: list[Reexamination] = field(default_factory=list)
    released: Optional[tuple[datetime, str, str]] = None  # (when, channel, its state) a wait ended in delivery
    differences: list[str] = field(default_factory=list)  # the replay here against the routing_replay row
    seconds: dict[str, float] = field(default_factory=dict)
    timeline: list[Snapshot] = field(default_factory=list, repr=False)  # the sender's configuration that day
    # Its published gold.stuck_messages row (None: the report does not list it as stuck): the report's story of
    # it, which the text and --json end with, so that explain and the report never tell two
    stuck: Optional[dict] = None
    # Its traced records across queue managers (clwl.analyses.observed.message_flow over bronze.activity_operations): the
    # application's put, each channel agent's get from a transmission queue and put on arrival, an application's
    # get. Empty: nobody traced it.
    flow: list[FlowStep] = field(default_factory=list)

    @property
    def sighting(self) -> Optional[dict]:
        """The stuck row of a message a browse saw on a transmission queue after the replay had delivered it (no
        hold state, observed_on_xmitq): the browse is the stronger evidence."""
        s = self.stuck
        return s if s is not None and not s.get("channel_state") and s.get("observed_on_xmitq") else None

    @property
    def application(self) -> Optional[str]:
        """The application that put it (clwl.analyses.incidents.application_of of its open handle)."""
        from clwl.analyses.incidents import application_of

        return application_of(self.event.open_handle) if self.event is not None else None

    @property
    def remedy(self) -> Optional[str]:
        """Why it stayed behind its channel and what to do, from clwl.analyses.remedies' one table (None: it never
        stayed)."""
        if self.sighting is not None:
            from clwl.analyses.remedies import remedy, stay_cause

            s = self.sighting
            if stay_cause(s.get("why"), s.get("detail"), browse=True) != "between-captures":
                # The application's cause (bind on open, ...): the missing capture is the evidence's, not a cause.
                return stay_remedy({**self.row, "stay_reason": s.get("why"), "stay_detail": s.get("detail"),
                                    "held_from": s.get("held_from")}, self.timeline)
            seen = sighting_seen(self.sighting)
            return remedy("between-captures", seen=f"the {seen.strftime('%H:%M')} browse" if seen else None,
                          channel=self.sighting.get("channel")) + "."
        return stay_remedy(self.row, self.timeline)

    @property
    def fate(self) -> dict:
        return {k: self.row.get(k) for k in FATE_COLUMNS}

    def to_json(self) -> dict:
        ev = self.event
        return {
            "msg_id": self.msg_id, "run_date": self.run_date, "sending_qmgr": self.sending_qmgr,
            "put_time": _iso(self.row.get("put_time")), "queue": self.row.get("queue"),
            "target_qmgr": self.row.get("target_qmgr"), "bind": self.row.get("bind"),
            "length": self.row.get("length"), "profile": self.row.get("profile"),
            "open_handle": ev.open_handle if ev else None, "group_id": ev.group_id if ev else None,
            "config_time": _iso(self.config_time), "earlier_messages": self.earlier_messages,
            "routing_state": {ch: {"dest_seq_factor": f, "dest_seq_number": n}
                              for ch, (f, n) in self.state_before.items()},
            "route": self.result.to_json(1, True) if self.result is not None else None,
            "fate": {k: _iso(v) if isinstance(v, datetime) else v for k, v in self.fate.items()},
            "reexaminations": [r.to_json() for r in self.reexaminations],
            "released": ({"at": _iso(self.released[0]), "channel": self.released[1], "state": self.released[2]}
                         if self.released else None),
            "application": self.application, "remedy": self.remedy,
            "sighting": ({"seen_at": _iso(sighting_seen(self.sighting)), "xmitq": self.sighting.get("xmitq"),
                          "channel": self.sighting.get("channel"), "detail": self.sighting.get("detail")}
                         if self.sighting is not None else None),
            "report": ({"stuck": True, "held_from": _iso(self.stuck.get("held_from")),
                        "released_at": _iso(self.stuck.get("released_at")), "why": self.stuck.get("why"),
                        "detail": self.stuck.get("detail"), "source": self.stuck.get("timing_source")}
                       if self.stuck is not None else {"stuck": False}),
            "flow": [s.to_json() for s in self.flow],
            "matches_routing_replay": not self.differences, "differences": self.differences,
            "routing_replay_version": self.routing_replay_version,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


def _iso(t) -> Optional[str]:
    return as_utc(t).isoformat() if isinstance(t, datetime) else t


# -- 1. the row -------------------------------------------------------------------------------------------------
def find_rows(lake: Path, msg_id: str, run_date: Optional[str] = None) -> tuple[list[dict], Optional[int]]:
    """Every published gold.routing_replay row of ``msg_id`` (on ``run_date`` when given), and the version read.
    A message id is hex: it is looked up as given and upper-cased."""
    import pyarrow.dataset as ds

    gold = lake_root(lake) / "gold"
    path = gold / "routing_replay"
    try:
        pub = read_published(gold)
    except PublishedError as e:
        raise ExplainError(str(e)) from None
    if not is_delta_table(path) or not pub.visible("routing_replay"):
        raise ExplainError(f"no published gold.routing_replay in {lake} (run `clwl run` first, or name the lake "
                           "with --lake)")
    try:
        table = snapshot(path, pub.version("routing_replay"))
    except LakeFileError as e:
        raise ExplainError(str(e)) from None
    except Exception as e:  # deltalake's own refusal of a damaged log: one line, not a traceback
        raise ExplainError(f"cannot read the Delta table {path}: {' '.join(str(e).split())[:400]}") from None
    ids = sorted({msg_id, msg_id.upper()})
    where = ds.field("msg_id").isin(ids)
    if run_date is not None:
        where = where & (ds.field("run_date") == run_day(run_date))
    rows = table.rows(filters=where).to_pylist()
    rows.sort(key=lambda r: (r["run_date"], r["sending_qmgr"]))
    return rows, table.version


def find_stuck(lake: Path, row: dict) -> Optional[dict]:
    """The message's published gold.stuck_messages row: what the report says of it (None: not stuck there, or no
    such table)."""
    import pyarrow.dataset as ds

    gold = lake_root(lake) / "gold"
    path = gold / "stuck_messages"
    try:
        pub = read_published(gold)
        if not is_delta_table(path) or not pub.visible("stuck_messages"):
            return None
        table = snapshot(path, pub.version("stuck_messages"))
    except (PublishedError, LakeFileError):
        return None
    where = ((ds.field("msg_id") == row["msg_id"]) & (ds.field("run_date") == row["run_date"])
             & (ds.field("sending_qmgr") == row["sending_qmgr"]))
    found = table.rows(filters=where).to_pylist()
    return found[0] if found else None


def sighting_seen(sighting: dict) -> Optional[datetime]:
    """When the browse saw it: gold.stuck_messages.seen_at. In rows published before that column, a browse-only
    row's wait began at held_from and lasted age_seconds until the browse; a row with a release (the channel agents'
    trace saw it leave) then has its age run to that release, and the browse time is not known (None)."""
    from datetime import timedelta

    if sighting.get("seen_at") is not None:
        return sighting["seen_at"]
    held, age = sighting.get("held_from"), sighting.get("age_seconds")
    if sighting.get("released_at") is not None:
        return None
    return held + timedelta(seconds=age) if held is not None and age is not None else None


def pick_row(rows: list[dict], msg_id: str, run_date: Optional[str], sender: Optional[str]) -> dict:
    """The one row to explain, or ExplainError saying why there is none or which ones to choose from."""
    if sender is not None:
        rows = [r for r in rows if r["sending_qmgr"] == sender]
    where = (f" on {run_date}" if run_date else "") + (f" from {sender}" if sender else "")
    if not rows:
        raise ExplainError(f"message {msg_id} is not in the published gold.routing_replay{where}")
    if len(rows) > 1:
        found = ", ".join(f"{r['run_date']} from {r['sending_qmgr']}" for r in rows)
        ask = "--sender" if len({r["run_date"] for r in rows}) == 1 else "--date"
        raise ExplainError(f"message {msg_id} was replayed {len(rows)} times ({found}): name one with {ask}")
    return rows[0]


# -- 3./4. the replay ----------------------------------------------------------------------------------------
class _WatchingReplay(SenderReplay):
    """The pipeline's replay, with one message explained and its re-examinations recorded."""

    def __init__(self, qmgr: str, timeline: list[Snapshot], profile: str):
        super().__init__(qmgr, timeline, profile)
        self.watched: Optional[ReplayRow] = None
        self.reexaminations: list[Reexamination] = []

    def put_explained(self, ev: PutEvent) -> tuple[Optional[Route | RouteError], list[ReplayRow], dict]:
        """put(ev) through the router's explaining path: (the explained result, the rows put() yields, the
        routing state the message met)."""
        # The captures in force at the put, applied as put() would apply them first (then a no-op in put()),
        # so that the router exists and its state is the one the message meets.
        for _ in self._advance(ev.put_time):
            pass
        if self.router is None:  # no configuration captured yet: put() makes it a NO_CONFIGURATION row
            return None, list(self.put(ev)), {}
        state = self.router.state
        keys = sorted(set(state.numerators) | set(state.seq))
        before = {k: (str(state.factor(k)), state.seq_number(k)) for k in keys}
        explained: list = []
        route = self.router.route

        def route_explained(*args, **kwargs):
            res = route(*args, **{**kwargs, "explain": True})
            explained.append(res)
            return res

        self.router.route = route_explained  # an instance attribute for this one put
        try:
            rows = list(self.put(ev))
        finally:
            del self.router.route
        for rs in self.waiting.values():
            for r in rs:
                if r.msg_id == ev.msg_id:
                    self.watched = r
        return (explained[0] if explained else None), rows, before

    def _reallocate(self, channel: str, state: str, at: datetime) -> Iterator[ReplayRow]:
        row = self.watched
        if row is None or not any(r is row for r in self.waiting.get(channel, ())):
            yield from super()._reallocate(channel, state, at)
            return
        # The same question SenderReplay asks (peek leaves the routing state as it was), with its trace.
        redriven = (self.router.peek(Request(row.queue, row.target_qmgr, False, False, row.length))
                    if row.reallocatable else None)
        moves = row.reallocations
        yield from super()._reallocate(channel, state, at)
        moved = row.reallocations > moves
        self.reexaminations.append(Reexamination(
            at, channel, state, moved, row.final_qmgr if moved else None, row.final_channel if moved else None,
            moved and row.released_at != at, row.stay_reason, row.stay_detail, redriven))


def _feed(rep: SenderReplay, sub) -> list[ReplayRow]:
    """Route a batch of messages through ``rep`` (no trace); the rows that became final."""
    if sub.num_rows == 0:
        return []
    _, rows = rep.put_batch(put_columns(sub), batch_event(sub))
    return rows


def explain(lake: Path, msg_id: str, run_date: Optional[str] = None, sender: Optional[str] = None) -> Explanation:
    """The explanation of one message of the published gold.routing_replay (ExplainError when there is none)."""
    import pyarrow.compute as pc

    t0 = time.perf_counter()
    rows, version = find_rows(lake, msg_id, run_date)
    if not rows and run_date is not None:  # the wrong date: say which dates hold it
        elsewhere, _ = find_rows(lake, msg_id)
        dates = sorted({r["run_date"].isoformat() for r in elsewhere
                        if sender is None or r["sending_qmgr"] == sender})
        if dates:
            raise ExplainError(f"message {msg_id} is not in the published gold.routing_replay on {run_date}"
                               + (f" from {sender}" if sender else "") + f"; it was replayed on {', '.join(dates)}: "
                               f"--date {dates[-1]}")
    row = pick_row(rows, msg_id, run_date, sender)
    day, qm, msg_id = row["run_date"].isoformat(), row["sending_qmgr"], row["msg_id"]
    out = Explanation(day, qm, msg_id, row, version)
    out.stuck = find_stuck(lake, row)
    out.seconds["find"] = time.perf_counter() - t0
    t = time.perf_counter()
    out.flow = message_flow(message_operations(lake, day, msg_id), msg_id)
    out.seconds["flow"] = time.perf_counter() - t

    t = time.perf_counter()
    timeline = load_timelines(lake, day).get(qm)
    out.seconds["timeline"] = time.perf_counter() - t
    out.timeline = timeline or []
    if not timeline:
        out.differences += _compare(out)
        return out
    t = time.perf_counter()
    _, inputs = sender_inputs(lake, day, [qm])
    if not inputs:
        raise ExplainError(f"silver.message_events holds no messages of {qm} on {day} (re-ingested since the "
                           "publish?)")
    batches = list(sender_batches(inputs[0]))  # read and sorted at once (the sort holds the day anyway)
    out.seconds["read"] = time.perf_counter() - t

    t = time.perf_counter()
    rep = _WatchingReplay(qm, timeline, row["profile"] or "default")
    _, end = day_bounds(day)
    final: list[ReplayRow] = []
    found = False
    for batch in batches:
        if not found:
            hits = pc.indices_nonzero(pc.equal(batch.column("msg_id"), msg_id)).to_pylist()
            if not hits:
                _feed(rep, batch)
                out.earlier_messages += batch.num_rows
                continue
            i = hits[0]
            _feed(rep, batch.slice(0, i))
            out.earlier_messages += i
            out.event = put_event(batch.slice(i, 1).to_pydict(), 0)
            out.result, final, out.state_before = rep.put_explained(out.event)
            out.config_time = max((s.time for s in rep.timeline if s.time <= out.event.put_time), default=None)
            found = True
            if rep.watched is None:
                break  # delivered at once or failed: its fate is known
            batch = batch.slice(i + 1)
        final = _feed(rep, batch)  # it waits: the day goes on until its fate is known
        if any(r is rep.watched for r in final):
            break
    if found and rep.watched is not None and not any(r is rep.watched for r in final):
        list(rep.finish(end))
    out.seconds["replay"] = time.perf_counter() - t
    if not found:
        raise ExplainError(f"message {msg_id} is in gold.routing_replay but not in silver.message_events of {qm} "
                           f"on {day} (re-ingested since the publish?)")
    out.reexaminations = rep.reexaminations
    w = rep.watched
    if w is not None and w.released_at is not None and not (out.reexaminations and out.reexaminations[-1].moved
                                                            and out.reexaminations[-1].at == w.released_at):
        out.released = (w.released_at, w.final_channel, state_at(rep.timeline, w.final_channel, w.released_at))
    out.differences += _compare(out, w)
    out.seconds["total"] = time.perf_counter() - t0
    return out


def stay_remedy(row: dict, timeline: list[Snapshot]) -> Optional[str]:
    """The cause and remedy (clwl.analyses.remedies) of a message that stayed behind its channel, its objects named from
    the routing_replay row and the sender's configuration in force when it started waiting."""
    from clwl.analyses.remedies import alias_note, pinned_by, remedy, single_instance, stay_cause, step_of

    reason, detail = row.get("stay_reason"), row.get("stay_detail")
    if not reason or row.get("held_from") is None:
        return None
    at = row["held_from"]
    view = next((s.view for s in reversed(timeline) if s.time <= at), timeline[0].view if timeline else None)
    queue, qmgr = row.get("queue") or "", row.get("final_qmgr") or row.get("qmgr")
    key = stay_cause(reason, detail, single_instance=single_instance(view, queue))
    if key is None:
        return None
    pinned, fix = pinned_by(row.get("bind"), view, queue) if key == "bind-on-open" else (None, None)
    target = row.get("target_qmgr") or None
    text = remedy(key, qmgr=qmgr, queue=queue, channel=row.get("final_channel") or row.get("channel"),
                  sender=row.get("sending_qmgr"), target=target, alias=alias_note(view, target, qmgr),
                  pinned_by=pinned, fix=fix, step=step_of(detail))
    return text if text.endswith(".") else text + "."


def states_at(timeline: list[Snapshot], at: datetime) -> Optional[dict[str, str]]:
    """Each channel's state in the captures in force at ``at`` (None: no capture yet)."""
    for snap in reversed(timeline):
        if snap.time <= at:
            return {c.name: c.state for c in snap.view.channels}
    return None


def state_at(timeline: list[Snapshot], channel: Optional[str], at: datetime) -> str:
    """The state of ``channel`` in the captures in force at ``at`` (no status record: INACTIVE)."""
    states = states_at(timeline, at)
    return "?" if states is None else states.get(channel, "INACTIVE")


def _compare(out: Explanation, watched: Optional[ReplayRow] = None) -> list[str]:
    """Where the replay here differs from the published row (nothing, when the lake is as published)."""
    row, res, diffs = out.row, out.result, []
    if res is None:
        if row.get("error") != "NO_CONFIGURATION":
            diffs.append(f"no configuration of {out.sending_qmgr} before the message here; gold.routing_replay "
                         f"has it routed ({row.get('qmgr')}/{row.get('channel')})")
        return diffs
    mine = (res.qmgr, res.channel) if isinstance(res, Route) else (None, None)
    theirs = (row.get("qmgr"), row.get("channel"))
    if mine != theirs or (isinstance(res, RouteError) and res.error != row.get("error")):
        def show(q, c):
            return f"{q}/{c or 'local'}" if q else "no destination"

        diffs.append(f"the route explained here is {show(*mine)}"
                     + (f" ({res.error})" if isinstance(res, RouteError) else "")
                     + f"; gold.routing_replay's first destination is {show(*theirs)}"
                     + (f" ({row.get('error')})" if row.get("error") else ""))
    if watched is not None:
        for name, here in (("reallocations", watched.reallocations), ("final_qmgr", watched.final_qmgr),
                           ("final_channel", watched.final_channel), ("held", watched.held)):
            if here != row.get(name):
                diffs.append(f"{name}: {here!r} here, {row.get(name)!r} in gold.routing_replay")
    return diffs

"""The blast radius (clwl/analyses/blast.py) on hand-made estates: which messages one stopped hour leaves stuck, why, and
which go elsewhere.

The estate (tests/handmade.py, runmqsc's printed shape): QM1 sends; its view at 06:00 holds TO.QM2 and TO.QM3,
both RUNNING all day (weight 50 each: step 12 adds 1000/50 = 20 to a destination's DestSeqFactor per choice);
queue Q1 is on QM2 and QM3, Q2 on QM2 only, both DEFBIND(NOTFIXED). Reference: docs/algorithm.md, steps 1, 2,
6-9, 12 and "Binding and re-allocation" (a message waiting behind a channel that moves nothing is re-driven when
eligible; bind on open, a named queue manager and a group in logical order carry an all-zero AccountingToken and
stay).
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest

from clwl.analyses.blast import (
    STOPPED_STATE,
    STUCK_REASONS,
    BlastError,
    PutEvent,
    Window,
    blast_radius_of_events,
    busiest_hour,
    cases_of,
    stopped,
    stuck_reason,
    table_rows,
    with_bounds,
)
from clwl.engine.model import MOVING_STATES
from clwl.engine.replay import replay, timeline_from_captures
from clwl.parse.mqsc import parse_mqsc_text
from tests.handmade import chstatus_capture, config_capture

DAY = "2026-11-20"
T6 = datetime(2026, 11, 20, 6, 0, tzinfo=timezone.utc)
T10 = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)


def at(hh: int, mm: int) -> datetime:
    return datetime(2026, 11, 20, hh, mm, tzinfo=timezone.utc)


def timeline(qmgr: str, remotes: dict, queues: dict, states: dict[str, str]):
    """``qmgr``'s configuration and channel status captured at 06:00, nothing changing after."""
    caps = []
    for text, kinds in ((config_capture(qmgr, remotes, queues), set()), (chstatus_capture(qmgr, states), {"CHSTATUS"})):
        parsed = parse_mqsc_text(text, f"{DAY}/{qmgr}/capture.mqsc")
        assert not parsed.problems
        caps.append((T6, kinds, parsed.records))
    return timeline_from_captures(qmgr, caps)


QM1 = timeline("QM1", {"QM2": {}, "QM3": {}}, {"Q1": {"QM2": {}, "QM3": {}}, "Q2": {"QM2": {}}},
               {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"})


def put(n: int, t: datetime, queue: str = "Q1", **kw) -> PutEvent:
    return PutEvent(f"M{n:02d}", t, queue, **kw)


def qm1_day() -> list[PutEvent]:
    """One message before the busiest hour, nine in it (10:00-11:00), two after."""
    return [
        put(1, at(9, 50), bind="open", open_handle="orders-api:11:1"),  # the handle opens: bound to QM2
        put(2, at(10, 5), bind="open", open_handle="orders-api:11:1"),
        put(3, at(10, 10), bind="open", open_handle="orders-api:11:1"),
        put(4, at(10, 15), bind="open", open_handle="orders-api:11:1"),
        put(5, at(10, 20), open_handle="billing:22:1"),
        put(6, at(10, 21), open_handle="billing:22:1"),
        put(7, at(10, 22), open_handle="billing:22:1"),
        put(8, at(10, 23), open_handle="billing:22:1"),
        put(9, at(10, 30), "Q2", open_handle="billing:22:2"),
        put(10, at(10, 40), target_qmgr="QM2", open_handle="audit:33:1"),
        put(11, at(12, 0), open_handle="billing:22:1"),
        put(12, at(12, 1), open_handle="billing:22:1"),
    ]


def by_case(radius) -> dict[tuple, object]:
    return {(c.case.kind, c.case.name, c.case.sender): c for c in radius.cases}


def test_stopping_qm2_leaves_the_bound_the_named_and_the_single_instance_stuck_and_moves_the_rest():
    """The busiest hour is 10:00-11:00 (9 puts; 09:00-10:00 and 12:00-13:00 have 1 and 2).

    The day as it was (routing state from zero, ties by name): M1 opens orders-api:11:1 with bind on open: QM2
    and QM3 tie at DestSeqFactor 0, QM2 by name (QM2 20, DestSeqNumber 1); M2-M4 reuse that binding (no new
    choice). M5 -> QM3 (0 < 20; QM3 20, DSN 2); M6 -> QM2 (20 = 20, DSN 1 < 2; QM2 40, DSN 3); M7 -> QM3
    (20 < 40; QM3 40, DSN 4); M8 -> QM2 (40 = 40, DSN 3 < 4). M9 -> QM2 (Q2's only instance); M10 names QM2.
    Every channel RUNNING: nothing waits.

    QM2 stopped 10:00-11:00 (its one channel, TO.QM2, STOPPED): M2-M4 are bound to QM2 and wait behind TO.QM2,
    not eligible for re-allocation (bind on open): stuck, until 11:00 (M2 waits 55 min, the longest). M5-M8 are
    not fixed: steps 6-9 keep TO.QM3 (tier 1) over TO.QM2 (STOPPED, tier 4), so all four go to QM3: M6 and M8,
    which went over TO.QM2 that day, went elsewhere. M9: Q2 has one instance, on QM2 (step 1 leaves only it):
    it waits and stays, still the most favourable: stuck, single instance. M10 names QM2: stuck (named-qmgr).
    So 5 stuck (bind-on-open 3, single-instance 1, named-qmgr 1), 2 went elsewhere; the channel case TO.QM2 of
    QM1 is the same replay, with the same answer.

    QM3 stopped instead: the bound, the named and Q2 go to QM2 as before; M5-M8 all go to QM2, so M5 and M7
    (QM3's that day) went elsewhere; nothing stuck."""
    radius = blast_radius_of_events(DAY, {"QM1": QM1}, {"QM1": qm1_day()})
    assert radius.window == Window(T10, T10 + timedelta(hours=1), 9) and radius.window.label == "10:00-11:00"
    cases = by_case(radius)
    assert set(cases) == {("qmgr", "QM2", None), ("qmgr", "QM3", None), ("channel", "TO.QM2", "QM1"),
                          ("channel", "TO.QM3", "QM1")}
    for key in (("qmgr", "QM2", None), ("channel", "TO.QM2", "QM1")):
        c = cases[key]
        assert (c.stuck, c.reallocated) == (5, 2)
        assert c.by_reason == Counter({"bind-on-open": 3, "single-instance": 1, "named-qmgr": 1})
        assert c.longest_wait == timedelta(minutes=55) and c.still_waiting == 0
        assert (c.own_outage, c.own_outage_longest, c.own_outage_until) == (0, None, None)  # all released at 11:00
        assert {q: dict(n) for q, n in c.queues.items()} == {"Q1": {"stuck": 4, "reallocated": 2}, "Q2": {"stuck": 1}}
        assert {a: dict(n) for a, n in c.applications.items()} == {
            "orders-api": {"stuck": 3}, "billing": {"stuck": 1, "reallocated": 2}, "audit": {"stuck": 1}}
    c = cases[("qmgr", "QM3", None)]
    assert (c.stuck, c.reallocated, dict(c.queues)) == (0, 2, {"Q1": Counter({"reallocated": 2})})
    # Sorted by messages stuck, then went elsewhere: the queue manager before its channel at equal counts.
    assert [(c.case.kind, c.case.name) for c in radius.cases] == [
        ("qmgr", "QM2"), ("channel", "TO.QM2"), ("qmgr", "QM3"), ("channel", "TO.QM3")]
    # QM2's case and TO.QM2's share one replay, as do QM3's and TO.QM3's.
    assert radius.replays == 2


def test_the_json_has_the_documented_shape():
    radius = blast_radius_of_events(DAY, {"QM1": QM1}, {"QM1": qm1_day()})
    doc = json.loads(json.dumps(radius.to_json()))
    assert doc["run_date"] == DAY and doc["busiest_hour"] == "10:00-11:00"
    first = doc["cases"][0]
    assert {k: first[k] for k in ("kind", "name", "sender", "stuck", "reallocated")} == {
        "kind": "qmgr", "name": "QM2", "sender": None, "stuck": 5, "reallocated": 2}
    assert first["by_reason"] == {"bind-on-open": 3, "named-qmgr": 1, "single-instance": 1}
    assert first["queues"]["Q1"] == {"stuck": 4, "reallocated": 2}
    assert first["applications"]["orders-api"] == {"stuck": 3, "reallocated": 0}
    assert first["longest_wait_seconds"] == 55 * 60 and first["stopped"] == {"QM1": ["TO.QM2"]}
    assert first["own_outage"] == {"messages": 0, "longest_seconds": None, "until": None}


def test_the_table_a_report_shows():
    """The readable table (clwl blast, and a report): the cases that changed something, most stuck first."""
    rows = table_rows(blast_radius_of_events(DAY, {"QM1": QM1}, {"QM1": qm1_day()}))
    assert rows[0] == ("stopped for the hour", "sender", "stuck", "went elsewhere", "stuck because",
                       "longest wait in the stop", "then the day's own outage")
    assert rows[1] == ("queue manager QM2", "all", "5", "2", "bind-on-open 3, named-qmgr 1, single-instance 1",
                       "55m 00s", "-")
    assert rows[2][:4] == ("channel TO.QM2", "QM1", "5", "2") and rows[3][:4] == ("queue manager QM3", "all", "0", "2")
    assert len(rows) == 5


def test_a_channel_already_retrying_that_day_adds_nothing():
    """TO.QM2 RETRYING all day (captured so at 06:00 and 18:00): the day as it was already sends nothing not fixed
    to QM2 (steps 6-9 keep RUNNING TO.QM3 over RETRYING TO.QM2), M1 opens its handle on QM3 (so M2-M4 are bound
    to QM3), and M9 (Q2's only instance) and M10 (names QM2) already wait behind TO.QM2 (they stayed that day
    too): stopping QM2 for the hour changes no message's fate. Nothing stuck, nothing moved."""
    caps = []
    for t, text, kinds in ((T6, config_capture("QM1", {"QM2": {}, "QM3": {}},
                                               {"Q1": {"QM2": {}, "QM3": {}}, "Q2": {"QM2": {}}}), set()),
                           (T6, chstatus_capture("QM1", {"TO.QM2": "RETRYING", "TO.QM3": "RUNNING"}), {"CHSTATUS"}),
                           (at(18, 0), chstatus_capture("QM1", {"TO.QM2": "RETRYING", "TO.QM3": "RUNNING"}),
                            {"CHSTATUS"})):
        caps.append((t, kinds, parse_mqsc_text(text, "x.mqsc").records))
    tl = timeline_from_captures("QM1", caps)
    c = by_case(blast_radius_of_events(DAY, {"QM1": tl}, {"QM1": qm1_day()}))[("qmgr", "QM2", None)]
    assert (c.stuck, c.reallocated) == (0, 0)


def test_a_group_in_logical_order_stays_and_a_queue_manager_case_adds_up_its_senders():
    """Two senders, QM1 (the estate above) and QM4 (the same view of QM2 and QM3, its channels TO.QM2 and
    TO.QM3). QM4 puts a group G1 in logical order with bind on group: the first message of the group chooses
    QM2 (tie at 0, by name) at 09:55, the group's next two at 10:10 and 10:20 are bound to it. QM1 puts only M1
    (09:50) and M2 (10:05) on its bind-on-open handle, bound to QM2. The busiest hour is 10:00-11:00 (3 puts).

    QM2 stopped: QM1's M2 stuck (bind-on-open), QM4's two group messages stuck (bind-on-group): 3 in the
    queue manager case, 1 in TO.QM2 of QM1, 2 in TO.QM2 of QM4."""
    qm4 = timeline("QM4", {"QM2": {}, "QM3": {}}, {"Q1": {"QM2": {}, "QM3": {}}}, {"TO.QM2": "RUNNING"})
    group = dict(bind="group", open_handle="feed:44:1", group_id="G1", logical_order=True)
    events = {"QM1": qm1_day()[:2],
              "QM4": [put(41, at(9, 55), **group), put(42, at(10, 10), **group), put(43, at(10, 20), **group)]}
    cases = by_case(blast_radius_of_events(DAY, {"QM1": QM1, "QM4": qm4}, events))
    assert cases[("qmgr", "QM2", None)].by_reason == Counter({"bind-on-group": 2, "bind-on-open": 1})
    assert cases[("channel", "TO.QM2", "QM1")].stuck == 1
    assert cases[("channel", "TO.QM2", "QM4")].by_reason == Counter({"bind-on-group": 2})
    assert cases[("qmgr", "QM2", None)].case.stops == (("QM1", frozenset({"TO.QM2"})), ("QM4", frozenset({"TO.QM2"})))


def test_a_message_still_waiting_at_the_end_of_the_day_counts_its_wait_to_midnight():
    """TO.QM2 goes RETRYING at 10:30 (a capture then) and stays so: in the day as it was, M10 (10:40, names QM2)
    already waits; M9 (Q2 on QM2 only, 10:30) meets TO.QM2 RETRYING and waits too: both stayed that day, not
    counted. With QM2 stopped from 10:00, M2-M4 (bound on open) wait from their puts; at 11:00 the case's
    channel is RETRYING again (the day's state), not moving, so they wait on until the day ends: stuck, still
    waiting at midnight, M2 the longest (24:00 - 10:05 = 13 h 55 min)."""
    caps = []
    for t, text, kinds in ((T6, config_capture("QM1", {"QM2": {}, "QM3": {}},
                                               {"Q1": {"QM2": {}, "QM3": {}}, "Q2": {"QM2": {}}}), set()),
                           (T6, chstatus_capture("QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"}), {"CHSTATUS"}),
                           (at(10, 30), chstatus_capture("QM1", {"TO.QM2": "RETRYING", "TO.QM3": "RUNNING"}),
                            {"CHSTATUS"})):
        caps.append((t, kinds, parse_mqsc_text(text, "x.mqsc").records))
    tl = timeline_from_captures("QM1", caps)
    radius = blast_radius_of_events(DAY, {"QM1": tl}, {"QM1": qm1_day()})
    c = by_case(radius)[("qmgr", "QM2", None)]
    assert c.by_reason == Counter({"bind-on-open": 3})
    assert c.still_waiting == 3
    # The stop's part (10:05-11:00) and the day's own (11:00-24:00), apart: never one 13 h 55 min wait.
    assert c.longest_wait == timedelta(minutes=55)
    assert (c.own_outage, c.own_outage_longest, c.own_outage_until) == (3, timedelta(hours=13), at(0, 0) + timedelta(days=1))
    assert table_rows(radius)[1][5:] == ("55m 00s", "3 held until day end, the longest 13h 00m more")


def test_the_busiest_hour_is_the_earliest_of_equals_and_none_without_puts():
    assert busiest_hour(DAY, {9: 5, 13: 7, 15: 7}).label == "13:00-14:00"
    assert busiest_hour(DAY, {23: 1}).label == "23:00-24:00"
    with pytest.raises(BlastError, match="no messages put on 2026-11-20"):
        busiest_hour(DAY, {})


def test_the_case_timeline_stops_only_the_window_and_the_baseline_sees_the_same_captures():
    """A capture is added at the window's bounds (the view in force then) in both; the case's channel is STOPPED
    (a state that moves nothing) from 10:00 to before 11:00 only."""
    assert STOPPED_STATE not in MOVING_STATES
    base = with_bounds(QM1, T10, T10 + timedelta(hours=1))
    assert [s.time for s in base] == [T6, T10, T10 + timedelta(hours=1)]
    case = stopped(base, frozenset({"TO.QM2"}), T10, T10 + timedelta(hours=1))

    def states(snap):
        return {c.name: c.state for c in snap.view.channels}

    assert [states(s)["TO.QM2"] for s in case] == ["RUNNING", STOPPED_STATE, "RUNNING"]
    assert all(states(s)["TO.QM3"] == "RUNNING" for s in case)
    # The added captures change nothing in the day as it was: the same fates as the plain replay.
    plain = {r.msg_id: (r.final_qmgr, r.held_from) for r in replay("QM1", QM1, qm1_day())}
    bounded = {r.msg_id: (r.final_qmgr, r.held_from) for r in replay("QM1", base, qm1_day())}
    assert plain == bounded


def test_cases_are_every_destination_and_every_channel_in_force_in_the_window():
    cases = cases_of({"QM1": QM1}, Window(T10, T10 + timedelta(hours=1), 1))
    assert [(c.kind, c.name, c.sender) for c in cases] == [
        ("qmgr", "QM2", None), ("qmgr", "QM3", None), ("channel", "TO.QM2", "QM1"), ("channel", "TO.QM3", "QM1")]


@pytest.mark.parametrize("why, detail, key", [
    ("not-reallocatable", "bind-on-open", "bind-on-open"),
    ("not-reallocatable", "bind-on-group", "bind-on-group"),
    ("not-reallocatable", "named-qmgr", "named-qmgr"),
    ("still-most-favourable", "the only eligible instance (step 1)", "single-instance"),
    ("still-most-favourable", "channel CLWLRANK (step 4a): rank is taken before channel state", "rank"),
    ("still-most-favourable", "channel state: every other channel is no better (step 9)", "no-better-destination"),
])
def test_each_stay_has_one_reason(why, detail, key):
    assert stuck_reason(why, detail) == key
    assert key in {r.key for r in STUCK_REASONS}


def test_the_replays_from_the_window_start_are_the_whole_day_replayed():
    """The cases start from a copy of the day as it was at 10:00 and read the day after the window only as far as
    they need; the batch path. Checked against the reference path (SenderReplay.put, every message of the day)
    on a varied day: 400 messages 06:00-18:00 (one every 108 s), Q1 and Q2, not fixed, three bind-on-open handles
    reopened every 40 messages, a named QM2 every 13th, a group in logical order every 17th; the busiest hour
    is one of the full ones. Stuck = stayed in the case and not in the day as it was; went elsewhere = over the
    stopped channel that day, over another in the case."""
    events = []
    for i in range(400):
        t = T6 + timedelta(seconds=108 * i)
        kw: dict = {"open_handle": f"app{i % 3}:{i % 3}:{i // 40}"}
        if i % 5 == 0:
            kw["bind"] = "open"
        if i % 13 == 0:
            kw["target_qmgr"] = "QM2"
        if i % 17 == 0:
            kw.update(bind="group", group_id=f"G{i // 100}", logical_order=True)
        events.append(put(i, t, "Q2" if i % 11 == 0 else "Q1", **kw))
    radius = blast_radius_of_events(DAY, {"QM1": QM1}, {"QM1": events})
    w = radius.window
    base_tl = with_bounds(QM1, w.start, w.end)
    base = {r.msg_id: r for r in replay("QM1", base_tl, events, until=w.start + timedelta(days=1))}
    for c in radius.cases:
        chans = dict(c.case.stops)["QM1"]
        case = {r.msg_id: r for r in replay("QM1", stopped(base_tl, chans, w.start, w.end), events,
                                            until=w.start + timedelta(days=1))}
        stuck = {m for m, r in case.items() if r.stayed and not base[m].stayed}
        moved = {m for m, r in case.items() if m not in stuck and not r.stayed and base[m].final_channel in chans
                 and r.final_channel not in chans and r.final_channel is not None
                 and (w.start <= r.put_time < w.end or r.reallocations > base[m].reallocations)}
        assert (c.stuck, c.reallocated) == (len(stuck), len(moved)), c.case
        assert c.by_reason == Counter(stuck_reason(case[m].stay_reason, case[m].stay_detail) for m in stuck)
    assert radius.cases[0].stuck > 0 and radius.cases[0].reallocated > 0


def test_a_stop_that_meets_the_days_own_outage_reports_both_apart():
    """Issue 39 item 9. TO.QM2 RUNNING at 06:00, RETRYING at the 11:00 capture (the day's own outage), RUNNING again
    at the 14:00 capture. The day as it was: everything of the busiest hour (10:00-11:00) is delivered at once over
    running channels (as in the first test); M11 and M12 (12:00) go to QM3 (steps 6-9: RUNNING before RETRYING),
    outside the hour and not compared.

    QM2 stopped 10:00-11:00: the five stuck of the first test (M2-M4 bound on open, M9 the only instance, M10 named)
    wait behind TO.QM2. At 11:00 the case is the day as it was again, and the day's capture shows TO.QM2 RETRYING:
    nothing moves them (not re-allocatable, or still the most favourable), so they wait until the 14:00 capture
    shows it RUNNING. The stop's wait: the longest is M2's, 10:05-11:00 = 55 min. The day's own outage then held
    all five 11:00-14:00: 3 h more each. Merged, M2 would show 3 h 55 min, which no one-hour stop causes."""
    caps = []
    for t, states in ((T6, "RUNNING"), (at(11, 0), "RETRYING"), (at(14, 0), "RUNNING")):
        caps.append((t, {"CHSTATUS"}, parse_mqsc_text(chstatus_capture(
            "QM1", {"TO.QM2": states, "TO.QM3": "RUNNING"}), "s.mqsc").records))
    caps.insert(0, (T6, set(), parse_mqsc_text(config_capture(
        "QM1", {"QM2": {}, "QM3": {}}, {"Q1": {"QM2": {}, "QM3": {}}, "Q2": {"QM2": {}}}), "c.mqsc").records))
    radius = blast_radius_of_events(DAY, {"QM1": timeline_from_captures("QM1", caps)}, {"QM1": qm1_day()})
    c = by_case(radius)[("qmgr", "QM2", None)]
    assert (c.stuck, c.reallocated) == (5, 2)
    assert c.longest_wait == timedelta(minutes=55)
    assert (c.own_outage, c.own_outage_longest, c.own_outage_until, c.still_waiting) == (
        5, timedelta(hours=3), at(14, 0), 0)
    assert table_rows(radius)[1][5:] == ("55m 00s", "5 held until 14:00, the longest 3h 00m more")
    doc = json.loads(json.dumps(radius.to_json()))["cases"][0]
    assert doc["longest_wait_seconds"] == 55 * 60
    assert doc["own_outage"] == {"messages": 5, "longest_seconds": 3 * 3600, "until": "2026-11-20T14:00:00+00:00"}


def test_the_readable_output_and_the_report_count_the_cases_alike(capsys):
    """The estate of the first test: 4 cases (QM2, QM3, TO.QM2 of QM1, TO.QM3 of QM1): QM2's two leave messages
    stuck, QM3's two only send messages elsewhere, none changes nothing; 2 replays (each channel set once). The
    readable output and the report say it in the same sentence (clwl.analyses.blast.case_counts)."""
    from clwl.cli.blast import write_readable
    from clwl.report.advice import Answer, blast_answer

    radius = blast_radius_of_events(DAY, {"QM1": QM1}, {"QM1": qm1_day()})
    radius.seconds = {"total": 0.0}
    sentence = ("4 cases stopped (2 queue managers, 2 channels): 2 left messages stuck, 2 only sent messages "
                "elsewhere, 0 changed nothing; 2 replays (a sender's channels stopped together are replayed once, "
                "whatever cases share them)")
    write_readable(radius)
    out = capsys.readouterr().out
    assert out.count(sentence + ".") == 1
    ans = Answer("blast", "", "")
    blast_answer(ans, radius)
    assert ans.lines[0].endswith("put then); " + sentence + ".")
    # and the same rows: the report's table is the readable table, column for column
    rows = [line.split() for line in out.splitlines() if line.startswith(("queue manager ", "channel "))]
    assert len(rows) == len(ans.tables[0][1].rows) == 4

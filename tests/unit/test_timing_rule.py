"""The replay's wait against the channel agents' trace (issue 29 item 2: clwl.analyses.observed.timing_agreement) and one
message followed across queue managers (item 3: clwl.analyses.observed.message_flow).

The rule (docs/diagnosis.md, "Timing: the replay against the channel agents' trace"): the replay gives each
message a window for leaving its transmission queue: its put time when it delivered it at once; from when it
started waiting to its release when it waited; no end when it held it to the end of the day. The trace's
departure agrees when it falls inside the window widened by TIMING_TOLERANCE (60 s) at both ends. So, with the
issue's own examples: released at 17:00, left 17:00:04 -> agrees (4 s < 60 s); delivered at 13:52, left 17:00
-> does not (3h08m after the window closed: the channel stopped between status captures).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from clwl.analyses.observed import (
    TIMING_CAUSES,
    TIMING_TOLERANCE,
    ObservedMessage,
    concerns,
    message_flow,
    timing_agreement,
)
from clwl.parse.activity_trace import parse_activity_trace_file
from tests.handmade import DAY, msg, timing_landing


def _at(hh: int, mm: int, ss: int = 0) -> datetime:
    return datetime(2026, 11, 20, hh, mm, ss, tzinfo=timezone.utc)


def _row(put: datetime, held_from=None, released_at=None, held=False, error=None, sender="QM1") -> dict:
    return {"sending_qmgr": sender, "put_time": put, "held_from": held_from, "released_at": released_at,
            "held": held, "error": error}


def _seen(left=None, arrived=None, left_qmgr="QM1", arrived_qmgr="QM2") -> ObservedMessage:
    return ObservedMessage(msg(1), left, left_qmgr if left else None, "SCTQ" if left else None, "TO.QM2", "QM2", "Q1",
                           True if left else None, arrived, arrived_qmgr if arrived else None, "TO.QM2", "Q1",
                           True if arrived else None, 1 if left else 0, 1 if arrived else 0)


def test_released_at_17_and_left_4_seconds_later_agrees():
    v = timing_agreement(_row(_at(16, 0), _at(16, 0), _at(17, 0)), _seen(_at(17, 0, 4)))
    assert v.agrees is True and v.cause is None
    assert "released it at 17:00:00" in v.note and "at 17:00:04" in v.note


def test_delivered_at_13_52_and_left_at_17_disagrees_stopped_between_captures():
    v = timing_agreement(_row(_at(13, 52)), _seen(_at(17, 0)))
    assert (v.agrees, v.cause) == (False, "stopped-between-captures")
    assert "delivered it at once at 13:52:00" in v.note and "3h08m00s later" in v.note


def test_the_tolerance_is_the_bound_at_both_ends():
    """At once: the put time +/- 60 s agrees, 61 s after does not (and 61 s before is a clock question)."""
    put = _at(10, 0)
    assert timing_agreement(_row(put), _seen(put + TIMING_TOLERANCE)).agrees is True
    assert timing_agreement(_row(put), _seen(put - TIMING_TOLERANCE)).agrees is True
    late = timing_agreement(_row(put), _seen(put + TIMING_TOLERANCE + timedelta(seconds=1)))
    assert (late.agrees, late.cause) == (False, "stopped-between-captures")
    early = timing_agreement(_row(put), _seen(put - TIMING_TOLERANCE - timedelta(seconds=1)))
    assert (early.agrees, early.cause) == (False, "before-put")


def test_a_departure_inside_the_wait_agrees_and_one_long_after_the_release_does_not():
    row = _row(_at(7, 10), _at(7, 10), _at(8, 0))
    assert timing_agreement(row, _seen(_at(7, 45))).agrees is True  # the channel ran again between captures
    v = timing_agreement(row, _seen(_at(8, 20)))
    assert (v.agrees, v.cause) == (False, "left-after-release")


def test_held_to_the_end_of_the_day_but_it_left_is_a_capture_gap():
    v = timing_agreement(_row(_at(7, 40), _at(7, 40), held=True), _seen(_at(8, 40, 2)))
    assert (v.agrees, v.cause) == (False, "capture-gap")
    assert "to the end of the day" in v.note and "at 08:40:02" in v.note


def test_only_the_arrival_traced_stands_for_the_departure():
    v = timing_agreement(_row(_at(6, 10)), _seen(arrived=_at(6, 10, 2)))
    assert v.agrees is True and "has it arrive on QM2 (its departure was not traced) at 06:10:02" in v.note


def test_no_verdict_for_another_queue_managers_row_a_failed_put_or_no_time():
    """The receiving agent's put is a put event on QM2 too: QM2's row of the id is not the departure compared."""
    seen = _seen(_at(6, 10, 1), _at(6, 10, 2))
    assert timing_agreement(_row(_at(6, 10, 2), sender="QM2"), seen) is None
    assert timing_agreement(_row(_at(6, 10), error="MQRC_UNKNOWN_OBJECT_NAME"), seen) is None
    assert timing_agreement(_row(_at(6, 10)), _seen()) is None
    # only the arrival traced: compared on every queue manager but the one it arrived on
    assert concerns(_row(_at(6, 10)), _seen(arrived=_at(6, 10, 2))) is True
    assert concerns(_row(_at(6, 10), sender="QM2"), _seen(arrived=_at(6, 10, 2))) is False


def test_every_cause_is_said_in_words():
    assert set(TIMING_CAUSES) == {"stopped-between-captures", "left-after-release", "capture-gap", "before-put"}
    assert all(len(text) > 40 for text in TIMING_CAUSES.values())


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> list:
    root = timing_landing(tmp_path_factory.mktemp("timing"))
    ops = []
    for qm in ("QM1", "QM2"):
        (path,) = Path(root, DAY, qm).glob("*.amqsact")
        ops += parse_activity_trace_file(path).operations
    return ops


def test_one_message_followed_across_queue_managers(traced):
    """M1 of tests/handmade.timing_landing: TO.QM2's agent on QM1 gets it at 06:10:01 (transmission header: QM2/Q1),
    QM2's receiving agent puts it to Q1 at 06:10:02, the application ORDERS gets it at 06:11:00."""
    flow = message_flow(traced, msg(1).lower())
    assert [(s.kind, s.at, s.qmgr, s.queue) for s in flow] == [
        ("left", _at(6, 10, 1), "QM1", "SYSTEM.CLUSTER.TRANSMIT.QUEUE"),
        ("arrived", _at(6, 10, 2), "QM2", "Q1"),
        ("got", _at(6, 11), "QM2", "Q1"),
    ]
    left, arrived, got = flow
    assert (left.channel, left.remote, left.committed) == ("TO.QM2", "QM2/Q1", True)
    assert (arrived.channel, arrived.committed, got.application) == ("TO.QM2", True, "ORDERS")
    assert left.source.endswith("QM1.mca.amqsact") and left.line > 0
    assert message_flow(traced, msg(7)) == []  # not traced


def test_the_estates_observed_departures_against_its_replay(traced):
    """The estate's traced messages against what its replay does (tests/spark/test_timing_agreement.py derives
    the replay): M1 at once 06:10, left 06:10:01 (agrees); M2 at once 06:40, left 08:00:03 (stopped between
    captures); M4 waited 07:10-08:00, left 08:00:04 (agrees); M6 held from 07:40 to the end, left 08:40:02."""
    from clwl.analyses.observed import observed_timeline

    seen = {k.upper(): v for k, v in observed_timeline(traced).items()}
    assert sorted(seen) == sorted(msg(n) for n in (1, 2, 3, 4, 6))
    cases = [(1, _row(_at(6, 10)), True, None), (2, _row(_at(6, 40)), False, "stopped-between-captures"),
             (4, _row(_at(7, 10), _at(7, 10), _at(8, 0)), True, None),
             (6, _row(_at(7, 40), _at(7, 40), held=True), False, "capture-gap")]
    for n, row, agrees, cause in cases:
        v = timing_agreement(row, seen[msg(n)])
        assert (v.agrees, v.cause) == (agrees, cause), (n, v)


def test_the_reports_findings_state_timing_beside_destination_and_each_cause():
    import pandas as pd

    from clwl.report.timing import timing_counts, timing_findings

    assert timing_counts({"timing_observed": None}) is None
    assert "published before" in timing_findings(None, None, None, 7)[0]
    assert "every wait rests on the channel status" in timing_findings((0, 0, 0), None, None, 7)[0]
    wrong = pd.DataFrame({"timing_cause": ["stopped-between-captures", "stopped-between-captures", "capture-gap"]})
    lines = timing_findings((5, 2, 3), (4, 4, 0), wrong, 7)
    assert lines[0] == ("The replay's wait agrees with the channel agents' trace on 2 of 5 traced messages (40.0 %, "
                        "within 60 s); 3 disagree, listed below. Destination: 4 of 4 agree (above).")
    assert lines[1].startswith("2 of the 7 replayed messages were not traced leaving")
    assert lines[2] == f"2 messages: {TIMING_CAUSES['stopped-between-captures']}."
    assert lines[3] == f"1 message: {TIMING_CAUSES['capture-gap']}."

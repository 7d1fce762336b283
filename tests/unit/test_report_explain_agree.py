"""`clwl explain` and the report tell the same fate (issue 27 item 6): a message the replay delivered at once, its
channel RUNNING in the last status capture, but that a 15:30 browse found on the transmission queue, is stuck with
its release unknown in both, with the same browse time, and both give the remedy of clwl.analyses.remedies' one table
("between-captures"). No lake: the report from a hand-made Day, explain's fate from the same rows."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from clwl.analyses.explain import Explanation
from clwl.analyses.remedies import remedy
from clwl.cli.explain import fate_lines
from clwl.report import Day, build_report
from clwl.report.read import combine

UTC = dt.timezone.utc
PUT = dt.datetime(2026, 11, 20, 13, 55, 28, tzinfo=UTC)
AGE = 5672  # 13:55:28 + 1:34:32 = 15:30:00, the browse


def sighting() -> dict:
    return dict(run_date=dt.date(2026, 11, 20), sending_qmgr="QM1", msg_id="M-B", queue="APP.ORDERS", qmgr="QM3",
                channel="TO.QM3", xmitq="SYSTEM.CLUSTER.TRANSMIT.QUEUE", channel_state=None, held_from=PUT,
                released_at=None, age_seconds=AGE, why="not-reallocatable",
                detail="bind-on-open; on the transmission queue at 15:30 although the last capture before its put "
                       "showed the channel working: it failed between captures", observed_on_xmitq=True)


def test_explain_and_the_report_both_say_stuck_release_unknown_after_the_1530_browse():
    row = dict(msg_id="M-B", run_date=dt.date(2026, 11, 20), sending_qmgr="QM1", put_time=PUT, queue="APP.ORDERS",
               qmgr="QM3", channel="TO.QM3", held_from=None, delivered_at=PUT, final_qmgr="QM3",
               final_channel="TO.QM3", error=None, reallocations=0, held=False, observed_qmgr=None)
    ex = Explanation("2026-11-20", "QM1", "M-B", row, 1, stuck=sighting())
    lines = fate_lines(ex)
    assert not any(line.startswith("delivered") for line in lines)  # no longer "delivered 13:55"
    assert lines[1] == ("but the browse at 2026-11-20 15:30:00 UTC found it on SYSTEM.CLUSTER.TRANSMIT.QUEUE, still "
                        "waiting: TO.QM3 failed between two status captures")
    assert lines[2].startswith("stuck, when it left the transmission queue is unknown")
    # Bound on open (its detail's head): the application's cause is the remedy, in explain and the report alike;
    # the missing capture is the evidence's (issue 39 item 3), said under "What the report could not see".
    expected = ex.remedy
    assert expected.startswith("bound on open by the MQOPEN of APP.ORDERS") and "DISPLAY CHSTATUS" not in expected

    rep = build_report(Day(dt.date(2026, 11, 20), "r", routing_cube=combine([]),
                           stuck=pd.DataFrame([sighting()]), distribution=pd.DataFrame(),
                           run_summary=pd.DataFrame()))
    cols = rep.stuck_groups.columns
    group = dict(zip(cols, [c for c, _ in rep.stuck_groups.rows[0]]))
    assert group["released"] == "unknown: still on the queue at 15:30 (browse)"
    assert group["remedy"] == expected
    assert rep.findings_evidence[-1] == "QM1: 1 message " + remedy("between-captures", seen=None,
                                                                  channel="TO.QM3") + "."
    assert "the other one was seen on a transmission queue by a browse after the replay had delivered it, and " \
           "when it left is unknown." in rep.findings_stuck[0]
    assert "none was still waiting" in rep.findings_stuck[0] and "of those that waited in the replay" in \
        rep.findings_stuck[0]

"""Timing agreement and one message followed across queue managers (issue 29 items 2 and 3), on a hand-made
estate (tests/handmade.timing_landing) with a channel that fails between two status captures.

QM1 puts Q1 (hosted on QM2 only) and Q2 (hosted on QM3 only); DEFBIND NOTFIXED. Captures on QM1:

  06:00 config; CHSTATUS TO.QM2 RUNNING,  TO.QM3 RUNNING
  07:00         CHSTATUS TO.QM2 RETRYING, TO.QM3 RETRYING
  08:00         CHSTATUS TO.QM2 RUNNING,  TO.QM3 RETRYING   (the last capture)

In truth TO.QM2 failed at 06:30 and ran again at 08:00; TO.QM3 failed at 06:45 and ran again at 08:40. The
replay (docs/algorithm.md, "Binding and re-allocation"; steps 6-9 put RETRYING in the third tier, so a message
routed over it waits on the transmission queue; each queue has one instance, so a re-driven message keeps its
channel: still the most favourable):

  M1 06:10 Q1: the 06:00 capture has TO.QM2 RUNNING: delivered at once.    Trace: left 06:10:01       -> agrees
  M2 06:40 Q1: still the 06:00 capture: delivered at once.                 Trace: left 08:00:03       -> DISAGREES
  M3 06:50 Q1: the same.                                                   Trace: left 08:00:03       -> DISAGREES
  M4 07:10 Q1: 07:00 RETRYING: waits from 07:10; released at 08:00.        Trace: left 08:00:04       -> agrees
  M5 07:30 Q1: waits from 07:30; released at 08:00.                        not traced                 -> null
  M6 07:40 Q2: waits behind TO.QM3; 08:00 RETRYING again: stays; held to the end of the day.
                                                                           Trace: left 08:40:02       -> DISAGREES
  M7 08:30 Q1: 08:00 RUNNING: delivered at once.                           not traced                 -> null

The rule (TIMING_TOLERANCE 60 s): M1 left 1 s after its put (agrees); M2 and M3 left 1h20m03s / 1h10m03s after
theirs (cause: stopped between captures); M4 left 4 s after its release (agrees); M6 left although the replay
held it to the end of the day (cause: a capture gap: no capture after 08:00 saw TO.QM3 running again).

The application ORDERS got M1 from Q1 on QM2 at 06:11:00 (its trace: the flow's last record). Both ends are
traced: QM2's receiving agent put M1 at 06:10:02, an arrival (a channel agent's put is no put event, so M1's id
is not repeated on QM2 and the day publishes).

So: routing_replay's QM1 rows: timing_agrees True for M1 and M4, False for M2, M3, M6, null for M5 and M7;
run_summary timing_observed 5, timing_agreed 2, timing_disagreed 3. stuck_messages: M4 and M5 waited and stayed
(still the most favourable) and M6 was held: the replay's three; the trace adds M2 and M3 (delivered at once by
the replay, left at 08:00:03), and ends M4's wait at 08:00:04 and M6's at 08:40:02 (timing_source "channel agent
trace"); M5's wait is the channel status captures' (released 08:00:00, timing_source "channel status").
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from tests.handmade import DAY, msg, timing_landing

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _at(hh: int, mm: int, ss: int = 0) -> datetime:
    return datetime(2026, 11, 20, hh, mm, ss, tzinfo=timezone.utc)


def _utc(v) -> datetime | None:
    import pandas as pd

    if v is None or pd.isna(v):
        return None
    t = pd.Timestamp(v)
    return (t.tz_convert("UTC") if t.tzinfo else t.tz_localize("UTC")).to_pydatetime()


@pytest.fixture(scope="module")
def published(spark, tmp_path_factory):
    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline

    root = tmp_path_factory.mktemp("timing")
    config = PipelineConfig(lake=root / "lake", landing=timing_landing(root / "landing"))
    outcome = run_pipeline(config, [DAY], spark=spark, progress=lambda m: None)
    (day,) = outcome.dates
    assert day.published, day.failures
    return config


def _gold(config, name: str):
    from deltalake import DeltaTable

    return DeltaTable(str(config.lake / "gold" / name)).to_pandas()


def test_routing_replay_says_when_each_traced_message_left_and_whether_the_wait_agrees(published):
    replay = _gold(published, "routing_replay")
    qm1 = replay[replay.sending_qmgr == "QM1"].set_index("msg_id")
    assert sorted(qm1.index) == [msg(n) for n in range(1, 8)]
    verdicts = {n: qm1.loc[msg(n), "timing_agrees"] for n in range(1, 8)}
    assert {n: (None if v is None or v != v else bool(v)) for n, v in verdicts.items()} == {
        1: True, 2: False, 3: False, 4: True, 5: None, 6: False, 7: None}
    causes = {n: qm1.loc[msg(n), "timing_cause"] for n in (2, 3, 6)}
    assert causes == {2: "stopped-between-captures", 3: "stopped-between-captures", 6: "capture-gap"}
    assert _utc(qm1.loc[msg(2), "observed_left_at"]) == _at(8, 0, 3)
    assert _utc(qm1.loc[msg(1), "observed_left_at"]) == _at(6, 10, 1)
    # both ends traced: QM2's receiving agent put M1 at 06:10:02, its arrival
    assert (_utc(qm1.loc[msg(1), "observed_arrived_at"]), qm1.loc[msg(1), "observed_arrived_qmgr"]) == (
        _at(6, 10, 2), "QM2")
    assert "delivered it at once at 06:40:00" in qm1.loc[msg(2), "timing_note"]
    assert "1h20m03s later" in qm1.loc[msg(2), "timing_note"]
    assert "released it at 08:00:00" in qm1.loc[msg(4), "timing_note"]
    assert set(replay.sending_qmgr) == {"QM1"}


def test_stuck_messages_takes_the_trace_where_it_saw_the_message_leave(published):
    stuck = _gold(published, "stuck_messages").set_index("msg_id")
    assert sorted(stuck.index) == [msg(n) for n in (2, 3, 4, 5, 6)]
    released = {n: _utc(stuck.loc[msg(n), "released_at"]) for n in (2, 3, 4, 5, 6)}
    assert released == {2: _at(8, 0, 3), 3: _at(8, 0, 3), 4: _at(8, 0, 4), 5: _at(8, 0), 6: _at(8, 40, 2)}
    sources = {n: stuck.loc[msg(n), "timing_source"] for n in (2, 3, 4, 5, 6)}
    assert sources == {2: "channel agent trace", 3: "channel agent trace", 4: "channel agent trace",
                       5: "channel status", 6: "channel agent trace"}
    assert stuck.loc[msg(2), "age_seconds"] == 4803  # 06:40:00 -> 08:00:03
    assert stuck.loc[msg(6), "age_seconds"] == 3602  # 07:40:00 -> 08:40:02
    assert "trace has it leave the transmission queue at 08:00:03" in stuck.loc[msg(2), "detail"]
    assert "failed between captures" in stuck.loc[msg(2), "detail"]
    assert not stuck.loc[msg(2), "observed_on_xmitq"]


def test_run_summary_counts_the_timing_verdicts(published):
    (summary,) = _gold(published, "run_summary").to_dict("records")
    assert (summary["timing_observed"], summary["timing_agreed"], summary["timing_disagreed"]) == (5, 2, 3)
    assert summary["messages_stuck"] == 5


def test_the_report_states_timing_beside_destination_and_lists_the_disagreements(published):
    md = (published.reports / DAY / "summary.md").read_text(encoding="utf-8")
    html = (published.reports / DAY / "report.html").read_text(encoding="utf-8")
    section = md[md.index("### Timing: the replay against the channel agents' trace"):]
    assert ("The replay's wait agrees with the channel agents' trace on 2 of 5 traced messages (40.0 %, within "
            "60 s); 3 disagree, listed below.") in section
    assert "2 of the 7 replayed messages were not traced leaving" in section
    assert "the channel agents' trace has it leave SYSTEM.CLUSTER.TRANSMIT.QUEUE at 08:00:03, 1h20m03s later" in section
    assert "2 messages: the channel stopped between two status captures" in section
    assert "1 message: the channel moved messages again after the last status capture" in section
    for n in (2, 3, 6):
        assert msg(n) in section or msg(n)[:8] in section
    assert "Timing: the replay against the channel agents' trace" in html
    assert "capture-gap" in html and "stopped-between-captures" in html


def test_clwl_explain_follows_the_message_across_queue_managers(published, capsys):
    from clwl.cli import main

    capsys.readouterr()
    assert main(["explain", msg(1), "--lake", str(published.lake), "--sender", "QM1"]) == 0
    out = capsys.readouterr().out
    flow = out[out.index("Flow"):]
    assert "2026-11-20 06:10:00 UTC  put      on QM1 to Q1 (the put record)" in flow
    assert "06:10:01 UTC  left     QM1's SYSTEM.CLUSTER.TRANSMIT.QUEUE over TO.QM2 for QM2/Q1" in flow
    assert "06:11:00 UTC  got      from QM2's Q1 by ORDERS" in flow
    assert "timing agrees:" in flow

    assert main(["explain", msg(2), "--lake", str(published.lake), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["kind"] for s in doc["flow"]] == ["left"]
    assert doc["flow"][0]["at"].startswith("2026-11-20T08:00:03")
    assert (doc["fate"]["timing_agrees"], doc["fate"]["timing_cause"]) == (False, "stopped-between-captures")

    assert main(["explain", msg(7), "--lake", str(published.lake)]) == 0
    assert "not traced: no application's or channel agent's activity trace" in capsys.readouterr().out

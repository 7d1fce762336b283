"""The gap rules' one home (clwl/landing/evidence.py), and that ``clwl check``, the ingest's plan and the report all call
it (issue 27 item 5). Expected values follow the rule in the module's docstring: consecutive channel status
captures further apart than the interval leave an unseen stretch; for a sender, so do first put to first capture
and last capture to last put; a sender without captures has its whole day (or its puts) unseen."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import clwl.analyses.check
import clwl.report.channels
import spark.ingest.run_log
from clwl.landing.discovery import LandingFile
from clwl.landing.evidence import accounting_gaps, chstatus_gap, chstatus_gaps
from spark.ingest.run_log import chstatus_notes


def at(h: int, m: int = 0) -> datetime:
    return datetime(2026, 11, 20, h, m, tzinfo=timezone.utc)


DAY = (at(0), at(0) + timedelta(days=1))


def test_captures_twelve_hours_apart_leave_one_unseen_stretch():
    """QM4 of the samples: captures at 06:00 and 18:00, interval 60 min: 06:00-18:00 (720 min) unseen."""
    g = chstatus_gap("QM4", [at(18), at(6)], timedelta(minutes=60))
    assert g.kind == "chstatus_interval"
    assert [(u.start, u.end, u.minutes) for u in g.unseen] == [(at(6), at(18), 720)]
    assert g.detail("2026-11-20") == ("QM4: channel status captured less often than every 60 min: no capture from "
                                      "06:00:00 to 18:00:00 (720 min)")


def test_a_senders_puts_before_the_first_and_after_the_last_capture_count():
    """Captures hourly 08:00-10:00 (never more than 60 min apart); puts 06:30-11:45: 06:30-08:00 (90 min) and
    10:00-11:45 (105 min) are unseen, named after the puts."""
    g = chstatus_gap("QM1", [at(8), at(9), at(10)], puts=(at(6, 30), at(11, 45)))
    assert [u.text for u in g.unseen] == ["first put 06:30:00 to 08:00:00 (90 min)",
                                          "10:00:00 to last put 11:45:00 (105 min)"]
    assert chstatus_gap("QM1", [at(8), at(9), at(10)], puts=(at(8, 30), at(9, 45))) is None


def test_a_sender_without_captures_is_never_a_healthy_day():
    """No capture: a sender's whole day is unseen (no_chstatus); a queue manager that puts nothing has no gap."""
    g = chstatus_gap("QM2", [], puts=(at(9), at(17)), day=DAY)
    assert g.kind == "no_chstatus" and [(u.start, u.end) for u in g.unseen] == [DAY]
    assert chstatus_gap("QM2", [], sends=True).kind == "no_chstatus"  # the ingest's plan: puts not read yet
    assert chstatus_gap("QM3", []) is None
    gaps = chstatus_gaps("2026-11-20", {"QM3": [at(6)], "QM4": [at(6), at(18)]}, {"QM2": (at(9), at(17))})
    assert [(g.qmgr, g.kind) for g in gaps] == [("QM2", "no_chstatus"), ("QM3", "chstatus_interval"),
                                                ("QM4", "chstatus_interval")]


def test_a_queue_manager_captured_once_a_day_is_unseen_after_its_capture():
    """Issue 39 item 4: QM3 (a receiver: it puts nothing) has channel status only at 06:00. After the last capture of
    the day its state is unseen; a receiver is watched while the estate's messages flow, from the day's first put
    (QM2's 09:00) to its last (QM2's 17:00): unseen 06:00 to 17:00, 660 min > 60. QM4, captured at 06:00 and 18:00,
    is unseen 06:00-18:00 (720 min) and not after 18:00 (the last put is 17:00)."""
    gaps = {g.qmgr: g for g in chstatus_gaps("2026-11-20", {"QM3": [at(6)], "QM4": [at(6), at(18)]},
                                             {"QM2": (at(9), at(17))})}
    assert [u.text for u in gaps["QM3"].unseen] == ["06:00:00 to the day's last put 17:00:00 (660 min)"]
    assert [u.text for u in gaps["QM4"].unseen] == ["06:00:00 to 18:00:00 (720 min)"]
    # Captured every hour while messages flow: nothing unseen.
    hourly = [at(h) for h in range(9, 18)]
    assert chstatus_gaps("2026-11-20", {"QM3": hourly}, {"QM2": (at(9), at(17))}) == [
        g for g in chstatus_gaps("2026-11-20", {}, {"QM2": (at(9), at(17))}) if g.qmgr != "QM3"]


def test_a_receiver_without_queue_accounting_is_named():
    gaps = accounting_gaps("2026-11-20", {"QM2": {"APP.Q"}, "QM3": {"APP.Q", "APP.R"}}, {"QM2": {"QM1"},
                                                                                      "QM3": {"QM1"}}, {"QM2"})
    assert [(g.kind, g.qmgr) for g in gaps] == [("no_accounting", "QM3")]
    assert "QM3 hosts APP.Q, APP.R (seen in the configuration of QM1) but has no queue accounting" in gaps[0].detail


def test_check_the_ingest_and_the_report_call_the_one_rule():
    """One home: the three callers import the same function (no copy of the rule)."""
    assert clwl.analyses.check.chstatus_gaps is chstatus_gaps
    assert clwl.report.channels.chstatus_gaps is chstatus_gaps
    assert clwl.analyses.check.accounting_gaps is accounting_gaps and clwl.report.channels.accounting_gaps is accounting_gaps
    assert "chstatus_gaps" in Path(spark.ingest.run_log.__file__).read_text()


def test_the_ingest_plan_notes_the_gaps_of_its_capture_names():
    """The plan sees file names only: QM4's chstatus captures at 06:00 and 18:00 (720 min apart) and a put file;
    QM2's put file without any capture (no_chstatus); QM3's single capture and no puts: nothing."""
    def file(qmgr: str, name: str, parser: str, ctype=None, t=None) -> LandingFile:
        return LandingFile(path="", source_file=f"2026-11-20/{qmgr}/{name}", run_date="2026-11-20",
                           observing_qmgr=qmgr, parser=parser, capture_type=ctype, capture_time=t, reject=None,
                           size_bytes=1, content_sha256="x")

    files = [file("QM4", "chstatus_060000.mqsc", "capture", "chstatus", at(6)),
             file("QM4", "chstatus_180000.mqsc", "capture", "chstatus", at(18)),
             file("QM4", "puts.csv", "puts"), file("QM2", "puts.csv", "puts"),
             file("QM3", "chstatus_060000.mqsc", "capture", "chstatus", at(6))]
    notes = chstatus_notes("2026-11-20", files)
    assert notes == [
        "gap no_chstatus: QM2 puts on 2026-11-20 but has no channel status capture (chstatus_HHMMSS) that day: "
        "channel states come from the STATUS of DISPLAY CLUSQMGR or an earlier day's capture",
        "gap chstatus_interval: QM4: channel status captured less often than every 60 min: no capture from "
        "06:00:00 to 18:00:00 (720 min)"]

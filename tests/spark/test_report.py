"""The HTML report and Markdown summary from published gold tables, read without Spark (clwl/report: deltalake
and pandas; pyspark cannot even be imported in the child that writes it). test_quality_publish.py checks deltalake
reads what Spark publishes; here the tables are written with deltalake, which is quicker, so nothing here needs
a Spark session."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys

import pytest

from spark.config import PipelineConfig
from test_quality_publish import (  # the same small, consistent gold tables the gate test publishes
    DAY,
    DI_SCHEMA,
    RR_SCHEMA,
    RS_SCHEMA,
    SM_SCHEMA,
    at,
    distribution_rows,
    replay_rows,
    stuck_rows,
    summary_rows,
    write_delta,
)

RUN_ID = "run-report"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("report") / "lake"
    cfg = PipelineConfig(lake=root)
    for table, rows, schema in (
        ("routing_replay", replay_rows(DAY), RR_SCHEMA),
        ("stuck_messages", stuck_rows(DAY), SM_SCHEMA),
        ("distribution", distribution_rows(DAY), DI_SCHEMA),
        ("run_summary", summary_rows(DAY, RUN_ID), RS_SCHEMA),
    ):
        write_delta(cfg.table_path("gold", table), rows, schema, partition_by=["run_date"])
    write_delta(
        cfg.table_path("silver", "channel_status"),
        [("QM1", "TO.QM2", "RUNNING", at(DAY, 6, 0), None, DAY),
         ("QM1", "TO.QM3", "RUNNING", at(DAY, 6, 0), at(DAY, 10, 0, 12), DAY),
         ("QM1", "TO.QM3", "STOPPED", at(DAY, 10, 0, 12), None, DAY),
         ("QM1", "TO.QM4", "INACTIVE", at(DAY, 6, 0), at(DAY, 12, 0), DAY),
         ("QM1", "TO.QM4", "RETRYING", at(DAY, 12, 0), at(DAY, 13, 0), DAY),
         ("QM1", "TO.QM4", "RUNNING", at(DAY, 13, 0), None, DAY)],
        "observing_qmgr string, channel string, status string, valid_from timestamp, valid_to timestamp, "
        "run_date date",
    )
    write_delta(cfg.table_path("bronze", "activity_operations"), activity_rows(), OPS_SCHEMA,
                partition_by=["run_date"])
    return root


# The columns of bronze.activity_operations the report reads (the LOW count), and a trace of the run date:
OPS_SCHEMA = ("run_date date, source_file string, position int, form string, operation string, comp_code string, "
              "trace_level string")


def activity_rows() -> list[tuple]:
    """3 puts that were replayed without MQ's answer because they were traced at LOW: an MQPUT, an MQPUT1, and
    an MQPUT with MQCC_WARNING (a put event all the same). Not counted: an MQOPEN at LOW (no put), a failed
    MQPUT at LOW (no message, no event), a summary-form MQPUT at LOW (no put event), an MQPUT at MEDIUM (it
    has MQ's answer) and a LOW MQPUT of another run date."""
    import datetime as dt

    f = "2026-11-20/QM1/QM1.amqsact"
    return [
        (DAY, f, 10, "verbose", "MQPUT", "MQCC_OK", "low"),
        (DAY, f, 20, "verbose", "MQPUT1", "MQCC_OK", "low"),
        (DAY, f, 30, "verbose", "MQPUT", "MQCC_WARNING", "low"),
        (DAY, f, 5, "verbose", "MQOPEN", "MQCC_OK", "low"),
        (DAY, f, 40, "verbose", "MQPUT", "MQCC_FAILED", "low"),
        (DAY, f, 50, "summary", "MQPUT", "MQCC_OK", "low"),
        (DAY, f, 60, "verbose", "MQPUT", "MQCC_OK", "medium"),
        (DAY + dt.timedelta(days=1), "2026-11-21/QM1/QM1.amqsact", 10, "verbose", "MQPUT", "MQCC_OK", "low"),
    ]


LOW_SENTENCE = "3 puts have no observed answer because their trace level was LOW"


def _images(html: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r"src=\"data:image/png;base64,([A-Za-z0-9+/=]+)\"", html)]


def test_report_without_a_jvm_leads_with_findings_and_ends_with_the_run_summary(lake):
    """In a child where pyspark cannot be imported at all."""
    code = (
        "import sys, json\n"
        "sys.modules['pyspark'] = None\n"
        "from pathlib import Path\n"
        "from clwl.report import Place, write_report\n"
        f"lake = Path({str(lake)!r})\n"
        f"paths = write_report(Place(lake, lake / 'reports'), {DAY.isoformat()!r}, {RUN_ID!r})\n"
        "print(json.dumps([str(p) for p in paths]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    html_path, md_path = map(__import__("pathlib").Path, json.loads(proc.stdout.strip().splitlines()[-1]))
    assert html_path == lake / "reports" / "2026-11-20" / "report.html"
    assert md_path == html_path.with_name("summary.md")

    html = html_path.read_text()
    images = _images(html)
    # the picture of the day (messages waiting per channel); APP.ORDERS replayed vs observed; the timeline of the
    # channels with trouble (TO.QM3 STOPPED, TO.QM4 RETRYING) and of the rest (TO.QM2, collapsed)
    assert len(images) == 4
    assert all(img.startswith(PNG_MAGIC) for img in images)
    assert "<h3>APP.ORDERS</h3>" in html and "Channels with trouble" in html
    assert "The other 1 sending channels (no trouble)" in html
    assert not re.search(r"(?:src|href)=['\"]?https?:", html)  # self-contained
    # Findings first: the two stuck messages behind TO.QM3 (STOPPED from 10:00:15, never released).
    assert html.index("<h2>Findings</h2>") < html.index("Stuck messages (2)") < html.index("Run summary")
    assert ("QM1 → QM3 over TO.QM3 (STOPPED), 10:00–00:00: 2 messages stuck, the oldest for 13:59: "
            "1 not re-allocatable (bind-on-open: AccountingToken is all zeros 1); 1 with QM3 still the most "
            "favourable (QM3 keeps the highest CLWLRANK (5) among the remaining channels 1)") in html
    for msg_id in ("QM1-1120-003", "QM1-1120-006"):
        assert msg_id in html
    # The run summary and the table versions it was made from, last.
    assert "run-report" in html and "messages_replayed" in html
    assert "gold.routing_replay (version 0)" in html
    # The one unexpected distribution row, with its explanation, in the findings.
    assert "QM2 received 9 against 5 replayed, p = 0.02: QM2 received more than CLWLWGHT(80) explains." in html
    # 6 messages with an observed destination (test_quality_publish.replay_rows), 5 agree (msg 8 went to QM2,
    # the replay says QM4). This run summary has no traced/agreed/disagreed: counted from routing_replay.
    findings = html[html.index("<h2>Findings</h2>"):html.index("</section>")]
    assert "The replay agrees with MQ on 5 of 6 traced puts (83.3 %); 1 disagrees, listed below." in findings
    row = re.search(r"<tr><td>QM1</td><td class=\"wrap\">QM1-1120-008</td>.*?</tr>", findings).group(0)
    # the trace is short (24 characters or fewer): shown as it is, not behind a disclosure
    assert "<td>QM4</td>" in row and "<td>QM2</td>" in row and "<td>12:=QM4</td>" in row
    assert findings.count('<td class="wrap">QM1-') == 1  # the one disagreement, no other message
    assert "DATE &#39;2026-11-20&#39;" in findings
    assert LOW_SENTENCE in findings  # activity_rows: 3 of its rows count
    assert "bronze.activity_operations (version 0)" in html
    # no silver config history in this lake: the configured columns are left blank, with why
    assert "the configured weights could not be read" in html

    md = md_path.read_text()
    assert md.index("## Findings") < md.index("## Stuck messages (2)") < md.index("## Run summary")
    assert "| QM1 | QM1-1120-003 | APP.ORDERS |" in md
    assert "![Bar chart of replayed (expected) against observed messages per destination for APP.ORDERS]" \
           "(charts/distribution_APP.ORDERS.png)" in md
    assert (html_path.parent / "charts" / "distribution_APP.ORDERS.png").read_bytes().startswith(PNG_MAGIC)
    assert (html_path.parent / "charts" / "channel_states_trouble.png").read_bytes().startswith(PNG_MAGIC)


def test_report_skips_a_missing_timeline_and_names_a_run_without_a_summary(lake, tmp_path):
    from clwl.report import write_report

    cfg = PipelineConfig(lake=lake, reports=tmp_path / "reports")  # the pipeline's configuration is a Places too
    html_path, md_path = write_report(cfg, DAY, "run-not-published", channel_status=tmp_path / "no_such_table")
    html = html_path.read_text()
    assert len(_images(html)) == 2  # the picture of the day and the distribution chart; no timeline
    assert "no channel status table at" in html
    assert "run run-not-published has no published summary; showing the latest published run" in html
    assert "QM1-1120-006" in html and "QM1-1120-006" in md_path.read_text()
    # the disagreement and the LOW count
    assert "| QM1 | QM1-1120-008 | 2026-11-20 10:06:00" in md_path.read_text()
    assert LOW_SENTENCE in html


def test_replay_cube_read_batch_by_batch_equals_the_whole_table(tmp_path, monkeypatch):
    """The report keeps only routing_replay's count cube, summed batch by batch: the same cube, and so the same
    per-queue overview, as the whole day's rows, whatever the batch size. Another run date's rows are not
    counted."""
    import datetime as dt

    import pandas as pd
    from deltalake import write_deltalake

    from clwl.report import read
    from clwl.report.shares import replay_overview

    day, other = dt.date(2026, 11, 20), dt.date(2026, 11, 21)
    rows = []
    for i in range(1000):
        rows.append({"run_date": day if i % 10 else other, "sending_qmgr": f"QM{i % 2}", "queue": f"APP.Q{i % 7}",
                     "path": ("local", "cluster", "igq")[i % 3], "error": "MQRC_UNKNOWN_OBJECT_NAME" if i % 37 == 0
                     else None, "reallocatable": i % 5 != 0, "held": i % 11 == 0,
                     "held_from": pd.Timestamp("2026-11-20 10:00", tz="UTC") if i % 11 == 0 else pd.NaT,
                     "stay_reason": "not-reallocatable" if i % 11 == 0 else None,
                     "agrees": None if i % 4 == 0 else i % 13 != 0, "reallocations": i % 17 == 0,
                     "final_qmgr": f"QM{i % 3 + 2}", "observed_qmgr": None if i % 4 == 0 else f"QM{i % 5}"})
    frame = pd.DataFrame(rows)
    frame["reallocations"] = frame["reallocations"].astype("int32")
    path = tmp_path / "routing_replay"
    write_deltalake(str(path), frame, partition_by=["run_date"])

    whole = read.combine([read.replay_cube(frame[frame["run_date"] == day].reset_index(drop=True))])
    keys = list(read.CUBE_KEYS)
    whole = whole.sort_values(keys).reset_index(drop=True)
    # 900 messages of the day (every 10th is the other date's), 7 queues
    assert whole["messages"].sum() == 900 and whole["queue"].nunique() == 7
    overview = replay_overview(whole, pd.DataFrame())
    assert overview["messages"].sum() == 900
    assert overview["still_waiting_at_day_end"].sum() == sum(1 for i in range(1000) if i % 10 and i % 11 == 0)
    for batch in (1 << 18, 64, 7):
        monkeypatch.setattr(read, "BATCH_ROWS", batch)
        streamed = read.read_table(str(path), day, "gold.routing_replay", columns=read.REPLAY_CUBE_COLS,
                                   reduce=read.arrow_cube).frame
        pd.testing.assert_frame_equal(streamed.sort_values(keys).reset_index(drop=True)[list(whole.columns)],
                                      whole, check_dtype=False)


def test_only_the_disagreements_are_read_batch_by_batch_and_the_first_ones_kept(tmp_path, monkeypatch):
    """read_disagreements keeps the first MAX rows in the query's order (sending queue manager, put time) and
    counts all of the run date's agrees = false rows, whatever the batch size: agreeing, unobserved and other
    dates' rows are filtered out by the read, or the count would be larger."""
    import datetime as dt

    import pandas as pd
    from deltalake import write_deltalake

    from clwl.report import read

    day, other = dt.date(2026, 11, 20), dt.date(2026, 11, 21)
    rows = []
    for i in range(600):
        agrees = None if i % 3 == 0 else i % 7 == 0  # every 3rd unobserved; of the rest, every 7th agrees
        rows.append({"run_date": day if i % 5 else other, "sending_qmgr": f"QM{i % 2}", "msg_id": f"M-{i:04d}",
                     "put_time": pd.Timestamp("2026-11-20 10:00", tz="UTC") + pd.Timedelta(seconds=599 - i),
                     "queue": "Q", "final_qmgr": "QM2", "final_xmitq": "X", "observed_qmgr": None if agrees is None
                     else "QM3", "observed_xmitq": None, "decided_by": "12", "config_time": pd.NaT,
                     "trace": "12:=QM2/TO.QM2", "agrees": agrees})
    frame = pd.DataFrame(rows)
    write_deltalake(str(tmp_path / "gold" / "routing_replay"), frame, partition_by=["run_date"])
    wrong = frame[(frame["run_date"] == day) & (frame["agrees"] == False)]  # noqa: E712
    expected = wrong.sort_values(["sending_qmgr", "put_time", "msg_id"])["msg_id"].head(25).tolist()
    assert len(wrong) > 25 and len(set(wrong["sending_qmgr"])) == 2
    for batch in (1 << 18, 64, 7):
        monkeypatch.setattr(read, "BATCH_ROWS", batch)
        kept, total = read.read_disagreements(tmp_path, day, version=None, limit=25)
        assert total == len(wrong)
        assert kept["msg_id"].tolist() == expected
    # the LOW count on a lake without bronze.activity_operations: nothing, no version
    assert read.low_trace_puts(tmp_path, day) == (0, None)

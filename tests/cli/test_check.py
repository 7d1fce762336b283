"""`clwl check LANDING`: the landing doctor, without a Spark session.

Three landing folders, all read by the real command (in-process `main`, so that no JVM can hide in a child):
the bundled samples (their deliberate defects, samples/README.md "Deliberate defects"), a folder built from the
real capture shapes of tests/fixtures (one file of each format), and small hand-made estates
(tests/handmade.py) for each gap and for the put records the ingest holds back. Expected counts come from the
fixtures' READMEs and docs/landing.md, not from the check itself.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from clwl.cli import main
from tests.handmade import PUTS_HEADER, chstatus_capture, config_capture, msg, put_row, write_day

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "landing"
FIXTURES = ROOT / "tests" / "fixtures"
DAY = "2026-11-20"
T = datetime(2026, 11, 20, tzinfo=timezone.utc)


def check(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def check_json(capsys, *args: str) -> tuple[int, dict]:
    code, out, err = check(capsys, *args, "--json")
    assert err == ""
    return code, json.loads(out)


def files_of(result: dict) -> dict[str, dict]:
    return {f["source_file"]: f for f in result["files"]}


def java_children() -> list[int]:
    """Processes started by this one whose command is java (a JVM the check would have started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            continue
        if ppid == os.getpid() and "java" in comm:
            found.append(int(entry.name))
    return found


# ----------------------------------------------------------------------------------------------------------
# The samples


def test_samples_list_the_deliberately_broken_files_and_exit_1(capsys):
    code, out, err = check(capsys, str(SAMPLES))
    assert (code, err) == (1, "")
    lines = out.splitlines()
    # The summary is the last line: 5 quarantined records (D1 1, D2 1, D4 the whole file, D5 2: samples/README.md).
    assert lines[-1].startswith("summary: 2 run dates, 77 files, ")
    assert lines[-1].endswith("5 quarantined; 6 gaps; 4 files would have records quarantined")
    text = "\n".join(lines)
    # Each defect under its date and queue manager, with the reason the ingest gives.
    assert "    config_060000.mqsc    mqsc      26 read, 25 accepted, 1 quarantined\n" \
           "      line 189: unbalanced parenthesis: unclosed '(' in 'CONNAME(10.40.1.23(1414)" in text  # D2
    assert "line 7: bad hex in accounting_token" in text and \
           "line 13: accounting_token is not 32 bytes (64 hex digits)" in text  # D5
    assert "1 read, 0 accepted, 1 quarantined  REJECTED whole\n" \
           "      not runmqsc output (no banner, echoed command or AMQnnnn message)" in text  # D4
    assert "record truncated at end of file: unclosed '(' in 'CONNAME(10.40.' at line 122" in text  # D1

    code, result = check_json(capsys, str(SAMPLES))
    assert code == 1
    files = files_of(result)
    broken = {f["source_file"]: (f["records_read"], f["records_accepted"], f["records_quarantined"], f["status"])
              for f in result["files"] if f["records_quarantined"]}
    assert broken == {
        "2026-11-20/QM5/chstatus_210000.mqsc": (5, 4, 1, "read"),  # D1: 4 complete records, the last cut off
        "2026-11-20/FR1/config_060000.mqsc": (26, 25, 1, "read"),  # D2
        "2026-11-20/QM3/config_140000.mqsc": (1, 0, 1, "rejected"),  # D4: a rejected file counts 1 read
        "2026-11-20/QM1/puts_late.csv": (21, 19, 2, "read"),  # D5: 2 rows out, "the other 19 are accepted"
    }
    # D3 (an unknown attribute) is accepted with its record: nothing quarantined, as the ingest does.
    d3 = files["2026-11-20/QM1/config_120000.mqsc"]
    assert (d3["records_quarantined"], d3["problems"]) == (0, [])
    assert files["2026-11-20/QM2/config_060000.json"]["format"] == "rest"
    assert files["2026-11-20/QM5/xmitq_153000.dmpmqmsg"]["format"] == "dmpmqmsg"
    # The sample estate has accounting on every receiver (QM1-QM4), put records on both days, configuration
    # before every first put: its only gaps are channel status captured hours apart.
    assert {g["kind"] for g in result["gaps"]} == {"chstatus_interval"}
    assert result["summary"]["line"] == lines[-1].removeprefix("summary: ")
    assert java_children() == []
    from pyspark.sql import SparkSession

    assert SparkSession._instantiatedSession is None  # no session was started


def test_one_date_of_the_samples_counts_as_the_ingest_does(capsys):
    """docs/landing.md, "Counting", shows the ingest's line for the samples' 2026-11-20: 47 files, 1222 records
    read, 1217 accepted, 5 quarantined, 1 file rejected."""
    code, result = check_json(capsys, str(SAMPLES), "--date", "2026-11-20", "--chstatus-interval", "720")
    s = result["summary"]
    assert (code, s["files"], s["records_read"], s["records_accepted"], s["records_quarantined"]) == \
           (1, 47, 1222, 1217, 5)
    assert sum(f["status"] == "rejected" for f in result["files"]) == 1
    # 720 min: QM4's 06:00 -> 18:00 is not longer than that; QM5's 18:00 -> 21:00 is not either.
    assert result["gaps"] == []


# ----------------------------------------------------------------------------------------------------------
# The real capture shapes


SHAPES = {  # landing file (under 2026-11-20/) -> fixture
    "QM1/config_060000.mqsc": "mqsc/interactive_terminal_copy.txt",
    "QM1/config_070000.json": "rest/estate_qm1_array.json",
    "QM1/puts.csv": "puts/puts_qm1.csv",
    "QM1/accounting.amqsmon": "amqsmon/accounting_numbered_fields.txt",
    "QM1/QM1.2026-11-20.amqsact": "amqsact_trace/notfixed_medium.amqsact",
    "QM1/xmitq_100000.amqsbcg": "xmitq/amqsbcg_sctq.txt",
    "QM1/xmitq_110000.dmpmqmsg": "xmitq/dmpmqmsg_sctq.txt",
    "QM1/xmitq_120000.txt": "xmitq/dmpmqmsg_da_sctq.txt",
    "QM1/xmitq_130000.txt": "xmitq/dmpmqmsg_dA_sctq.txt",
    "QM2/puts.jsonl": "puts/puts_qm2.jsonl",
    "QM4/puts.json": "puts/puts_qm4.json",
    "MQ1A/config_060000.txt": "zos/csqutil_mq1a.txt",
    "MQ2A/config_060000.txt": "zos/console_mq2a.txt",
}


@pytest.fixture
def shapes_landing(tmp_path) -> Path:
    for name, fixture in SHAPES.items():
        target = tmp_path / DAY / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / fixture, target)
    return tmp_path


def test_every_capture_shape_is_read_in_its_format(capsys, shapes_landing):
    code, result = check_json(capsys, str(shapes_landing))
    files = {f["source_file"].removeprefix(DAY + "/"): f for f in result["files"]}
    assert {n: f["format"] for n, f in files.items()} == {
        "QM1/config_060000.mqsc": "mqsc", "QM1/config_070000.json": "rest", "QM1/puts.csv": "csv",
        "QM1/accounting.amqsmon": "amqsmon", "QM1/QM1.2026-11-20.amqsact": "amqsact",
        "QM1/xmitq_100000.amqsbcg": "amqsbcg", "QM1/xmitq_110000.dmpmqmsg": "dmpmqmsg",
        "QM1/xmitq_120000.txt": "dmpmqmsg", "QM1/xmitq_130000.txt": "dmpmqmsg", "QM2/puts.jsonl": "jsonl",
        "QM4/puts.json": "json", "MQ1A/config_060000.txt": "zos", "MQ2A/config_060000.txt": "zos"}

    def counts(name):
        f = files[name]
        return f["records_read"], f["records_accepted"], f["records_quarantined"]

    # Counts the fixtures' READMEs state.
    assert counts("QM1/config_060000.mqsc") == (8, 8, 0)  # "8 records, no problem"
    assert counts("QM1/accounting.amqsmon") == (2, 2, 0)  # "2 rows, no problem"
    assert counts("MQ1A/config_060000.txt") == (7, 7, 0)  # "7 records, no problem"
    assert counts("MQ2A/config_060000.txt")[2] == 1  # "a CLUSQMGR block that lacks CLUSTER (one problem)"
    assert "missing key attribute" in files["MQ2A/config_060000.txt"]["problems"][0]["reason"]
    # The three dmpmqmsg -d styles hold the same messages with the same problems (xmitq/README.md).
    assert counts("QM1/xmitq_110000.dmpmqmsg") == counts("QM1/xmitq_120000.txt") == counts("QM1/xmitq_130000.txt")
    # notfixed_medium: 7 MQI calls (CONNX, OPEN, PUT, PUT, PUT1, CLOSE, DISC) + 3 put events = 10 records
    # (docs/landing.md, "Counting": a successful MQPUT is two records).
    assert counts("QM1/QM1.2026-11-20.amqsact") == (10, 10, 0)
    for f in files.values():
        assert f["records_read"] == f["records_accepted"] + f["records_quarantined"]
        assert len(f["problems"]) == min(f["records_quarantined"], 20)
    # Damaged on purpose: the put fixtures' bad rows, the browses' bad messages, MQ2A's record.
    assert code == 1
    assert {n for n, f in files.items() if f["records_quarantined"]} == {
        "QM1/puts.csv", "QM2/puts.jsonl", "QM1/xmitq_100000.amqsbcg", "QM1/xmitq_110000.dmpmqmsg",
        "QM1/xmitq_120000.txt", "QM1/xmitq_130000.txt", "MQ2A/config_060000.txt"}
    # Gaps: QM2 and QM4 put without any configuration capture of their own; QM1's configuration (and MQ1A's)
    # shows cluster queue instances on queue managers with no accounting file; no chstatus capture anywhere.
    kinds = {(g["kind"], g["qmgr"]) for g in result["gaps"]}
    assert {("no_configuration", "QM2"), ("no_configuration", "QM4"), ("no_chstatus", "QM1")} <= kinds
    assert ("no_configuration", "QM1") not in kinds  # its 06:00 capture precedes its first put
    assert ("no_accounting", "QM1") not in kinds  # accounting.amqsmon, QueueAccounting records


def test_check_and_ingest_parse_give_the_same_counts(capsys, shapes_landing):
    """Nothing is held back in this folder, so each file's counts are exactly what the ingest's parse task
    returns for it (spark.ingest.parse_landing_file, the activity trace with its handle state)."""
    from clwl.parse.activity_trace import TraceState
    from spark.ingest import discover_landing, parse_landing_file

    _, result = check_json(capsys, str(shapes_landing))
    _, specs, _ = discover_landing(shapes_landing)
    for spec in specs:
        summary, _ = parse_landing_file(spec, "test", None, "UTC",
                                        TraceState() if spec.parser == "activity_trace" else None)
        mine = files_of(result)[spec.source_file]
        assert (mine["format"], mine["records_read"], mine["records_accepted"], mine["records_quarantined"]) == \
               (summary["format"], summary["records_read"], summary["records_accepted"],
                summary["records_quarantined"]), spec.source_file


# ----------------------------------------------------------------------------------------------------------
# Hand-made estates: gaps and held-back put records

CONFIG_QM1 = config_capture("QM1", {"QM2": {}}, {"APP.ORDERS": {"QM1": {}, "QM2": {}}})


def accounting(qmgr: str) -> str:
    """The samples' accounting file of ``qmgr`` on 2026-11-20 (amqsmon output, QueueAccounting records)."""
    return (SAMPLES / DAY / qmgr / "accounting.amqsmon").read_text()


def puts(*rows: str) -> str:
    return "\n".join((PUTS_HEADER, *rows)) + "\n"


@pytest.fixture
def estate(tmp_path) -> Path:
    """QM1 puts to APP.ORDERS (instances on QM1 and QM2) from 06:10 to 06:50; configuration at 06:00, channel
    status at 06:00 and 07:00; both receivers have accounting. Nothing missing, nothing damaged."""
    write_day(tmp_path, DAY, "QM1", {
        "config_060000.mqsc": CONFIG_QM1,
        "chstatus_060000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING"}),
        "chstatus_070000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING"}),
        "puts.csv": puts(*(put_row(T + timedelta(hours=6, minutes=m), "QM1", "APP.ORDERS", msg(i))
                           for i, m in enumerate((10, 20, 50), 1))),
        "accounting.amqsmon": accounting("QM1")})
    write_day(tmp_path, DAY, "QM2", {"accounting.amqsmon": accounting("QM2")})
    return tmp_path


def test_a_clean_landing_exits_0_with_no_gap(capsys, estate):
    code, out, err = check(capsys, str(estate))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[-3:] == ["gaps: none", "", lines[-1]]
    assert lines[-1].startswith("summary: 1 run date, 6 files, ")
    assert lines[-1].endswith(" 0 quarantined; 0 gaps; nothing would be quarantined")
    assert "    puts.csv              csv       3 read, 3 accepted, 0 quarantined" in lines


def test_channel_status_further_apart_than_the_interval(capsys, estate):
    # 06:00 -> 07:00 is 60 min: not longer than 60, longer than 30.
    _, result = check_json(capsys, str(estate), "--chstatus-interval", "30")
    assert result["gaps"] == [{"kind": "chstatus_interval", "run_date": DAY, "qmgr": "QM1", "detail": (
        "QM1: channel status captured less often than every 30 min: no capture from 06:00:00 to 07:00:00 (60 min)")}]
    # A put after the last capture: the stretch to the last put counts (07:00 -> 07:45 is 45 min).
    (estate / DAY / "QM1" / "puts_more.csv").write_text(
        puts(put_row(T + timedelta(hours=7, minutes=45), "QM1", "APP.ORDERS", msg(9))))
    code, result = check_json(capsys, str(estate), "--chstatus-interval", "40")
    assert code == 0  # a gap is a warning
    assert [g["detail"] for g in result["gaps"]] == [
        "QM1: channel status captured less often than every 40 min: no capture from 06:00:00 to 07:00:00 (60 min), "
        "from 07:00:00 to last put 07:45:00 (45 min)"]


def test_a_receiver_without_accounting(capsys, estate):
    (estate / DAY / "QM2" / "accounting.amqsmon").unlink()
    code, result = check_json(capsys, str(estate))
    assert code == 0
    assert [(g["kind"], g["qmgr"]) for g in result["gaps"]] == [("no_accounting", "QM2")]
    assert result["gaps"][0]["detail"].startswith("QM2 hosts APP.ORDERS (seen in the configuration of QM1) but has "
                                                  "no queue accounting")


def test_configuration_must_come_before_the_first_put_and_carries_across_days(capsys, estate):
    early = puts(put_row(T + timedelta(hours=5, minutes=30), "QM1", "APP.ORDERS", msg(7)))
    (estate / DAY / "QM1" / "puts_early.csv").write_text(early)
    _, result = check_json(capsys, str(estate))
    assert [(g["kind"], g["qmgr"]) for g in result["gaps"]] == [("no_configuration", "QM1")]
    assert result["gaps"][0]["detail"].startswith("QM1 puts from 2026-11-20T05:30:00Z but no configuration capture")
    # A capture of the day before is in force at 05:30 (docs/landing.md: the history runs across dates), also
    # when only the later date is checked.
    write_day(estate, "2026-11-19", "QM1", {"config_180000.mqsc": CONFIG_QM1})
    for args in ((), ("--date", DAY)):
        _, result = check_json(capsys, str(estate), *args)
        assert not [g for g in result["gaps"] if g["run_date"] == DAY], args
    # The earlier date itself, checked too, has no put record at all.
    _, result = check_json(capsys, str(estate))
    assert [(g["kind"], g["run_date"]) for g in result["gaps"] if g["run_date"] != DAY][0] == \
           ("no_puts", "2026-11-19")


def test_a_day_without_put_records(capsys, estate):
    (estate / DAY / "QM1" / "puts.csv").unlink()
    code, result = check_json(capsys, str(estate))
    assert code == 0
    assert [g["kind"] for g in result["gaps"]] == ["no_puts"]


def test_put_records_the_ingest_holds_back_would_be_quarantined(capsys, estate):
    """docs/landing.md, "Held back": a put time outside the run date, and a msg_id the same sender already put
    that day in another file (the copy of the first file by name is kept)."""
    (estate / DAY / "QM1" / "puts_resent.csv").write_text(puts(
        put_row(T + timedelta(hours=6, minutes=20), "QM1", "APP.ORDERS", msg(2)),  # line 2: a repeat of msg 2
        put_row(T + timedelta(days=1, seconds=3), "QM1", "APP.ORDERS", msg(8))))  # line 3: 2026-11-21
    code, out, _ = check(capsys, str(estate))
    assert code == 1
    assert ("    puts_resent.csv       csv       2 read, 0 accepted, 2 quarantined (2 held back)\n"
            f"      line 2: duplicate msg_id {msg(2)}: already in 2026-11-20/QM1/puts.csv line 3 (kept there, "
            "replayed once); this copy in 2026-11-20/QM1/puts_resent.csv line 2 is not replayed\n"
            "      line 3: put time 2026-11-21T00:00:03.000Z is not in run date 2026-11-20 (file "
            "2026-11-20/QM1/puts_resent.csv line 3): not replayed, so that it is not routed with 2026-11-20's "
            "configuration; put the row in a put file of the 2026-11-21/QM1/ folder\n") in out
    assert out.splitlines()[-1].endswith("2 quarantined (2 of them put records held back); 0 gaps; "
                                         "1 file would have records quarantined")


def test_files_rejected_or_skipped_whole(capsys, estate, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "puts.csv"
    outside.write_text(PUTS_HEADER + "\n")
    (estate / DAY / "QM1" / "puts_link.csv").symlink_to(outside)
    (estate / DAY / "QM1" / "notes.txt").write_text("MonitoringType: QueueAccounting\n")
    (estate / DAY / "QM1" / ".config_060000.mqsc.swp").write_text("ignored: hidden")
    code, result = check_json(capsys, str(estate))
    assert code == 1
    files = files_of(result)
    assert f"{DAY}/QM1/.config_060000.mqsc.swp" not in files
    link, notes = files[f"{DAY}/QM1/puts_link.csv"], files[f"{DAY}/QM1/notes.txt"]
    assert (link["status"], link["records_quarantined"]) == ("skipped", 1)
    assert link["problems"][0]["reason"].startswith("skipped, not read: symbolic link to a file outside the landing")
    assert (notes["status"], notes["records_quarantined"]) == ("rejected", 1)
    assert "content looks like amqsmon output; name it *.amqsmon" in notes["problems"][0]["reason"]


def test_bad_arguments_exit_2(capsys, tmp_path):
    code, out, err = check(capsys, str(tmp_path / "missing"))
    assert (code, out) == (2, "")
    assert err == f"clwl check: landing folder {tmp_path / 'missing'} does not exist\n"
    code, out, err = check(capsys, str(SAMPLES), "--date", "2026-11-22")
    assert (code, out, err) == (2, "", f"clwl check: no folder for run date 2026-11-22 in {SAMPLES}\n")
    with pytest.raises(SystemExit) as e:  # argparse: not a number of minutes
        main(["check", str(SAMPLES), "--chstatus-interval", "0"])
    assert e.value.code == 2

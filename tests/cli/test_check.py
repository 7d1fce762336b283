"""`clwl check LANDING`: the landing doctor, without a Spark session.

Three landing folders, all read by the real command (in-process `main`, so that no JVM can hide in a child):
the bundled samples (their deliberate defects, samples/README.md "Deliberate defects"), a folder built from the
real capture shapes of tests/fixtures (one file of each format), and small hand-made estates
(tests/handmade.py) for each gap and for the put records the ingest holds back. Expected counts are counted
here from the files themselves, with a few lines of plain code per format (:func:`records_in`: the lines that open
a record), and the quarantines from the deliberate defects the READMEs list: never from the check, nor from the
ingest's parse task it calls.
"""

from __future__ import annotations

import csv
import json
import os
import re
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


def records_in(path: Path, fmt: str) -> int:
    """The records ``path`` holds, counted without any parser of the project: the lines that open a record in
    the format (docs/landing.md, "Counting"; the capture shapes of tests/fixtures). A file rejected whole counts
    1 record (read 1, quarantined 1)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if fmt == "mqsc":  # one record per "AMQnnnnI: Display ... details." message (not "... not found.")
        if not any(line.startswith("Starting MQSC for queue manager") for line in lines):
            return 1  # no runmqsc banner: not runmqsc output, rejected whole (the samples' D4)
        return sum(bool(re.fullmatch(r"AMQ\d{4}I?: Display .* details\.", line)) for line in lines)
    if fmt == "zos":  # one record per CSQM201I "... DETAILS" block and per CSQM409I (the DISPLAY QMGR answer)
        return sum(bool(re.match(r"CSQM(201|409)I ", line)) for line in lines)
    if fmt == "rest":  # runCommandJSON answers (a JSON array of them): one record per commandResponse entry
        return sum(len(answer["commandResponse"]) for answer in json.loads(text))
    if fmt == "csv":  # one record per non-blank row under the header
        return sum(bool(line.strip()) for line in lines) - 1
    if fmt == "jsonl":  # one record per non-blank line
        return sum(bool(line.strip()) for line in lines)
    if fmt == "json":  # one JSON array: one record per element
        return len(json.loads(text))
    if fmt == "amqsmon":  # one row per queue of a QueueAccounting record
        return sum(line.strip().startswith("QueueName:") for line in lines)
    if fmt == "amqsbcg":  # one message per browse
        return sum(line.strip().startswith("MQGET of message number") for line in lines)
    if fmt == "dmpmqmsg":  # a message starts with a line "N"
        return sum(line == "N" for line in lines)
    if fmt == "amqsact":  # every MQI call, and once more every successful MQPUT / MQPUT1 (its put event), but a
        # receiving channel agent's (API Environment: MQXE_MCA): an arrival, no put event
        count = 0
        for message in text.split("MonitoringType: MQI Activity Trace")[1:]:
            calls = message.split("MQI Operation:")[1:]
            agent = bool(re.search(r"^API Environment: MQXE_MCA$", message, re.M))
            puts = sum(bool(re.search(r"Operation Id: MQXF_PUT1?\n", c)) and "Completion Code: MQCC_OK" in c
                       for c in calls)
            count += len(calls) + (0 if agent else puts)
        return count
    raise AssertionError(f"no record count for format {fmt}")


# The samples' landing formats by file name (samples/README.md): runmqsc captures, MQ REST (QM2's configuration),
# put CSVs, amqsmon accounting, the two transmission queue browses, QM5's channel agents' activity trace.
SAMPLE_FORMATS = {".mqsc": "mqsc", ".json": "rest", ".csv": "csv", ".amqsmon": "amqsmon", ".amqsbcg": "amqsbcg",
                  ".dmpmqmsg": "dmpmqmsg", ".amqsact": "amqsact"}  # .amqsact: QM5's channel agents' trace
# samples/README.md, "Deliberate defects": records quarantined per file. D3 (an unknown attribute) quarantines
# nothing; D4 is rejected whole.
SAMPLE_DEFECTS = {
    "2026-11-20/QM5/chstatus_210000.mqsc": 1,  # D1: 4 complete records, the last cut off
    "2026-11-20/FR1/config_060000.mqsc": 1,  # D2: one record with an unbalanced parenthesis
    "2026-11-20/QM3/config_140000.mqsc": 1,  # D4: not MQ output, rejected whole (1 read, 1 quarantined)
    "2026-11-20/QM1/puts_late.csv": 2,  # D5: 2 rows with a bad AccountingToken
}
SAMPLE_REJECTED = {"2026-11-20/QM3/config_140000.mqsc"}  # D4


def sample_files(*dates: str) -> dict[str, Path]:
    """Every file of the samples' run date folders (<date>/<QM>/<file>; none is hidden), by landing path."""
    days = dates or sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())
    return {f.relative_to(SAMPLES).as_posix(): f for d in days for f in sorted((SAMPLES / d).glob("*/*"))
            if f.is_file()}


def expected_sample_counts(*dates: str) -> dict[str, tuple[int, int, int]]:
    """Per sample file: (read, accepted, quarantined), counted from the file and the README's defects."""
    out = {}
    for name, path in sample_files(*dates).items():
        read = records_in(path, SAMPLE_FORMATS[path.suffix])
        quarantined = SAMPLE_DEFECTS.get(name, 0)
        out[name] = (read, read - quarantined, quarantined)
    return out


def chstatus_interval_gaps(landing: Path, minutes: int, *dates: str) -> set[tuple[str, str]]:
    """(run date, queue manager) whose channel status captures are further apart than ``minutes`` (docs/cli-contract.md,
    "clwl check", gap chstatus_interval): between two captures of the day (their file names' times), and from the
    first put before the first capture and from the last capture to the last put after it: a sender's own puts (put
    times from its put CSVs, the rows it sends); for a queue manager that puts nothing, the day's first and last put
    of any sender (issue 39 item 4: after its last capture its state is unseen while messages flow)."""
    found = set()
    for day in sorted(p for p in landing.iterdir() if p.is_dir() and (not dates or p.name in dates)):
        puts = {qm.name: sorted(datetime.fromisoformat(row["put_time"].replace("Z", "+00:00"))
                                for f in qm.glob("puts*.csv") for row in csv.DictReader(f.open(encoding="utf-8"))
                                if row["sending_qmgr"] == qm.name)
                for qm in day.iterdir() if qm.is_dir()}
        every = sorted(t for ts in puts.values() for t in ts)
        for qm in sorted(p for p in day.iterdir() if p.is_dir()):
            times = sorted(datetime.strptime(day.name + f.stem.split("_")[1], "%Y-%m-%d%H%M%S")
                           .replace(tzinfo=timezone.utc) for f in qm.glob("chstatus_*.mqsc"))
            if not times:
                continue
            with_puts = puts[qm.name] or every
            points = ([with_puts[0]] if with_puts and with_puts[0] < times[0] else []) + times + \
                     ([with_puts[-1]] if with_puts and with_puts[-1] > times[-1] else [])
            if any(b - a > timedelta(minutes=minutes) for a, b in zip(points, points[1:])):
                found.add((day.name, qm.name))
    return found


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
    from pyspark.sql import SparkSession

    # What ran before in this pytest process (the session's Spark, for the shared lakes) is not the check's.
    jvms_before, session_before = set(java_children()), SparkSession._instantiatedSession
    code, out, err = check(capsys, str(SAMPLES))
    assert (code, err) == (1, "")
    lines = out.splitlines()
    # The summary is the last line. Its counts, from the files: the date folders, the files in them, the records
    # each holds (records_in), the README's defects (D1 1, D2 1, D4 the whole file, D5 2: 5 quarantined in 4
    # files), and the queue managers' channel status captures more than 60 min (the default) apart.
    dates = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())
    want = expected_sample_counts()
    gaps = chstatus_interval_gaps(SAMPLES, 60)
    assert len(dates) == 2 and len(gaps) >= 1  # what the samples are made to show: two days, captures hours apart
    assert lines[-1] == (
        f"summary: {len(dates)} run dates, {len(want)} files, {sum(r for r, _, _ in want.values())} records read, "
        f"{sum(a for _, a, _ in want.values())} accepted, {sum(SAMPLE_DEFECTS.values())} quarantined; "
        f"{len(gaps)} gaps; {len(SAMPLE_DEFECTS)} files would have records quarantined")
    text = "\n".join(lines)
    # Each defect under its date and queue manager, with the reason the ingest gives.
    # D2: the line lacking its ')' (README: 198); the problem names the line its record starts on (AMQ8441I).
    fr1 = (SAMPLES / DAY / "FR1" / "config_060000.mqsc").read_text().splitlines()
    unbalanced = next(n for n, line in enumerate(fr1, 1) if "CONNAME(10.40.1.23(1414) " in line)
    record = max(n for n, line in enumerate(fr1[:unbalanced], 1) if line.startswith("AMQ"))
    assert unbalanced == 198
    d2 = want["2026-11-20/FR1/config_060000.mqsc"]
    assert f"    config_060000.mqsc    mqsc      {d2[0]} read, {d2[1]} accepted, {d2[2]} quarantined\n" \
           f"      line {record}: unbalanced parenthesis: unclosed '(' in 'CONNAME(10.40.1.23(1414)" in text
    assert "line 7: bad hex in accounting_token" in text and \
           "line 13: accounting_token is not 32 bytes (64 hex digits)" in text  # D5
    assert "1 read, 0 accepted, 1 quarantined  REJECTED whole\n" \
           "      not runmqsc output (no banner, echoed command or AMQnnnn message)" in text  # D4
    assert "record truncated at end of file: unclosed '(' in 'CONNAME(10.40.' at line 122" in text  # D1

    code, result = check_json(capsys, str(SAMPLES))
    assert code == 1
    files = files_of(result)
    # Every file, with the records counted in it; the broken ones as the README describes them.
    assert {name: (f["records_read"], f["records_accepted"], f["records_quarantined"]) for name, f in files.items()} \
        == want
    assert {name: f["format"] for name, f in files.items()} == \
        {name: SAMPLE_FORMATS[path.suffix] for name, path in sample_files().items()}
    assert {name for name, f in files.items() if f["status"] == "rejected"} == SAMPLE_REJECTED
    assert {name for name, f in files.items() if f["status"] != "read"} == SAMPLE_REJECTED
    assert want["2026-11-20/QM5/chstatus_210000.mqsc"] == (5, 4, 1)  # D1: "the 4 complete records are accepted"
    assert want["2026-11-20/QM1/puts_late.csv"] == (21, 19, 2)  # D5: "the other 19 are accepted"
    # D3 (an unknown attribute) is accepted with its record: nothing quarantined, as the ingest does.
    d3 = files["2026-11-20/QM1/config_120000.mqsc"]
    assert (d3["records_quarantined"], d3["problems"]) == (0, [])
    assert files["2026-11-20/QM2/config_060000.json"]["format"] == "rest"
    assert files["2026-11-20/QM5/xmitq_153000.dmpmqmsg"]["format"] == "dmpmqmsg"
    # The sample estate has accounting on every receiver (QM1-QM4), put records on both days, configuration
    # before every first put: its only gaps are channel status captured hours apart.
    assert {g["kind"] for g in result["gaps"]} == {"chstatus_interval"}
    assert {(g["run_date"], g["qmgr"]) for g in result["gaps"]} == gaps
    assert result["summary"]["line"] == lines[-1].removeprefix("summary: ")
    assert set(java_children()) <= jvms_before  # no JVM was started by the check
    assert SparkSession._instantiatedSession is session_before  # no session was started


def test_one_date_of_the_samples_counts_as_the_ingest_does(capsys):
    """One date: the files of its folder only, each with the records counted in it. docs/landing.md, "Counting",
    shows the ingest's line for the samples' 2026-11-20; its figures must be these counts too."""
    code, result = check_json(capsys, str(SAMPLES), "--date", DAY, "--chstatus-interval", "720")
    want = expected_sample_counts(DAY)  # all the README's defects are on this date
    read, accepted, quarantined = (sum(c[i] for c in want.values()) for i in range(3))
    s = result["summary"]
    assert (code, s["files"], s["records_read"], s["records_accepted"], s["records_quarantined"]) == \
           (1, len(want), read, accepted, quarantined)
    assert quarantined == sum(SAMPLE_DEFECTS.values())
    assert sum(f["status"] == "rejected" for f in result["files"]) == len(SAMPLE_REJECTED)
    doc = re.search(rf"parse {DAY}: (\d+) files .*?, (\d+) records read, (\d+) accepted, (\d+) quarantined, "
                    r"(\d+) files rejected", (ROOT / "docs" / "landing.md").read_text())
    assert doc and tuple(map(int, doc.groups())) == (len(want), read, accepted, quarantined, len(SAMPLE_REJECTED))
    # 720 min: QM4's 06:00 -> 18:00 is not longer than that; QM5's 18:00 -> 21:00 is not either. The queue managers
    # captured once, at 06:00, and putting nothing (FR1, FR2, QM2, QM3) are unseen from 06:00 to the day's last put,
    # 19:49:57 (829 min): longer.
    assert chstatus_interval_gaps(SAMPLES, 720, DAY) == {(DAY, q) for q in ("FR1", "FR2", "QM2", "QM3")}
    assert chstatus_interval_gaps(SAMPLES, 60, DAY) > chstatus_interval_gaps(SAMPLES, 720, DAY)
    assert {(g["run_date"], g["qmgr"]) for g in result["gaps"]} == chstatus_interval_gaps(SAMPLES, 720, DAY)
    assert all("to the day's last put 19:49:57 (829 min)" in g["detail"] for g in result["gaps"])


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


SHAPE_FORMATS = {  # the format each shape is in (the fixture folders)
    "QM1/config_060000.mqsc": "mqsc", "QM1/config_070000.json": "rest", "QM1/puts.csv": "csv",
    "QM1/accounting.amqsmon": "amqsmon", "QM1/QM1.2026-11-20.amqsact": "amqsact",
    "QM1/xmitq_100000.amqsbcg": "amqsbcg", "QM1/xmitq_110000.dmpmqmsg": "dmpmqmsg",
    "QM1/xmitq_120000.txt": "dmpmqmsg", "QM1/xmitq_130000.txt": "dmpmqmsg", "QM2/puts.jsonl": "jsonl",
    "QM4/puts.json": "json", "MQ1A/config_060000.txt": "zos", "MQ2A/config_060000.txt": "zos"}


def test_each_shape_reads_the_records_its_file_holds(capsys, shapes_landing):
    """Nothing is held back in this folder (no msg_id repeats across its put files, every put time is on the
    date), so each file's records read are the records counted in it, and its quarantines are what its fixture
    was damaged with."""
    _, result = check_json(capsys, str(shapes_landing))
    files = {f["source_file"].removeprefix(DAY + "/"): f for f in result["files"]}
    assert set(files) == set(SHAPES) == set(SHAPE_FORMATS)
    for name, fmt in SHAPE_FORMATS.items():
        assert files[name]["records_read"] == records_in(shapes_landing / DAY / name, fmt), name
        assert files[name]["held_back"] == 0, name

    def put_rows(name: str) -> tuple[list[str], list[str]]:
        """The put fixtures hold their well-formed rows first, then a blank line, then one damaged row each."""
        text = (FIXTURES / SHAPES[name]).read_text()
        good, damaged = text.split("\n\n", 1)
        return ([r for r in good.splitlines() if r.strip()], [r for r in damaged.splitlines() if r.strip()])

    good, damaged = put_rows("QM1/puts.csv")
    assert len(damaged) >= 10
    assert (files["QM1/puts.csv"]["records_accepted"], files["QM1/puts.csv"]["records_quarantined"]) == \
           (len(good) - 1, len(damaged))  # the header is the first of the rows before the blank line
    good, damaged = put_rows("QM2/puts.jsonl")
    assert (files["QM2/puts.jsonl"]["records_accepted"], files["QM2/puts.jsonl"]["records_quarantined"]) == \
           (len(good), len(damaged))
    # Fixtures with no problem (their READMEs; puts_qm4.json holds well-formed rows only), and MQ2A's one.
    for name in ("QM1/config_060000.mqsc", "QM1/config_070000.json", "QM1/accounting.amqsmon",
                 "QM1/QM1.2026-11-20.amqsact", "QM4/puts.json", "MQ1A/config_060000.txt"):
        assert files[name]["records_quarantined"] == 0, name
    assert files["MQ2A/config_060000.txt"]["records_quarantined"] == 1


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
    that day in another file (the copy of the first file by name is kept; the reason names what differs, as the
    ingest's quarantine row does: tests/spark/test_held_back_agree.py)."""
    (estate / DAY / "QM1" / "puts_resent.csv").write_text(puts(
        put_row(T + timedelta(hours=6, minutes=20), "QM1", "APP.ORDERS", msg(2)),  # line 2: a repeat of msg 2
        put_row(T + timedelta(days=1, seconds=3), "QM1", "APP.ORDERS", msg(8))))  # line 3: 2026-11-21
    code, out, _ = check(capsys, str(estate))
    assert code == 1
    assert ("    puts_resent.csv       csv       2 read, 0 accepted, 2 quarantined (2 held back)\n"
            f"      line 2: duplicate msg_id {msg(2)}: already in 2026-11-20/QM1/puts.csv line 3 (kept there, "
            "replayed once); this copy in 2026-11-20/QM1/puts_resent.csv line 2 is not replayed (the same "
            "record)\n"
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


# ----------------------------------------------------------------------------------------------------------
# Without pyspark

# A meta-path finder that refuses pyspark and py4j, as an environment of `pip install .` alone has neither.
BLOCK_PYSPARK = (
    "import sys\n"
    "class _NoSpark:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] in ('pyspark', 'py4j'):\n"
    "            raise ModuleNotFoundError(f'No module named {name!r} (blocked)', name=name)\n"
    "sys.meta_path.insert(0, _NoSpark())\n"
)


def test_importing_the_check_loads_only_the_standard_library_and_clwl():
    import subprocess
    import sys

    code = BLOCK_PYSPARK + ("import clwl.analyses.check, json\n"
                            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
                            "('spark', 'pyspark', 'py4j', 'pandas', 'pyarrow', 'deltalake'))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_the_registry_checks_each_value_as_the_ingest_does():
    """clwl.lake.registry.TableSpec.value_checks is what the ingest's parse body (spark/ingest/parse_tasks.py,
    _column_checks) derives from pyspark's schemas, for every table: the same ranges and text columns."""
    from clwl.lake.registry import SPECS
    from spark.ingest.parse_tasks import _column_checks

    for key, spec in SPECS.items():
        assert spec.value_checks() == _column_checks(key), key


def test_the_samples_are_checked_without_pyspark(capsys):
    """`clwl check samples/landing` in a child where pyspark and py4j cannot be imported (as after `pip install .`
    alone): the same answer as here, exit 1 for the samples' deliberate defects."""
    import subprocess
    import sys

    code, expected = check_json(capsys, str(SAMPLES))
    probe = BLOCK_PYSPARK + ("from clwl.cli import main\n"
                             "code = main(['check', sys.argv[1], '--json'])\n"
                             "assert not [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')]\n"
                             "sys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(SAMPLES)], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert (done.returncode, done.stderr) == (code, "")
    assert json.loads(done.stdout) == expected


@pytest.mark.parametrize("given, hint", [
    ("empty", "the folder is empty (the bundled sample estate is samples/landing)"),
    ("date", "2026-11-20 is a run date folder: did you mean {landing}?"),
    ("qmgr", "QM1 is a queue manager folder of 2026-11-20: did you mean {landing}?"),
])
def test_a_folder_without_run_dates_is_never_a_clean_bill_of_health(capsys, tmp_path, given, hint):
    """An empty folder, or a run date or queue manager folder given for the landing folder: exit 2 with one line
    saying what was probably meant, not exit 0 with "nothing would be quarantined"."""
    landing = tmp_path / "landing"
    (landing / "2026-11-20" / "QM1").mkdir(parents=True)
    (landing / "2026-11-20" / "QM1" / "puts.csv").write_text(PUTS_HEADER + "\n")
    (tmp_path / "empty").mkdir()
    folder = {"empty": tmp_path / "empty", "date": landing / "2026-11-20", "qmgr": landing / "2026-11-20" / "QM1"}
    code, out, err = check(capsys, str(folder[given]))
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"clwl check: {folder[given]}: no run date folders (expected "
                                f"<landing>/<YYYY-MM-DD>/<QM>/<file>); {hint.format(landing=landing)}"]


def test_the_samples_qm4_gap_is_the_evidence_rules_own_sentence(capsys):
    """Issue 27 item 5: QM4's chstatus captures on 2026-11-20 are at 06:00 and 18:00 (its folder's file names), 720
    min apart. ``clwl check --json`` reports the gap in the words of clwl.landing.evidence.chstatus_gap, the function the
    ingest's plan and the report call too."""
    from clwl.landing.evidence import chstatus_gap

    assert main(["check", str(SAMPLES), "--date", DAY, "--json"]) in (0, 1)
    gaps = [g for g in json.loads(capsys.readouterr().out)["gaps"] if g["qmgr"] == "QM4"]
    six, eighteen = (datetime(2026, 11, 20, h, tzinfo=timezone.utc) for h in (6, 18))
    # QM4 puts nothing: after its 18:00 capture it is unseen until the day's last put, 19:49:57 (issue 39 item 4).
    last = datetime(2026, 11, 20, 19, 49, 57, tzinfo=timezone.utc)
    assert [g["detail"] for g in gaps] == [chstatus_gap("QM4", [six, eighteen], puts=(six, last),
                                                        sends=False).detail(DAY)]
    assert "no capture from 06:00:00 to 18:00:00 (720 min)" in gaps[0]["detail"]

"""The parts of the ingest stage that need no JVM: file names, discovery, one file's rows and counts, the
``clwl ingest`` argument errors. (Spark, Delta and the tables: test_ingest.py.)"""

from __future__ import annotations

import argparse
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from spark.config import REPO_ROOT
from spark.ingest import (
    LandingError,
    attrs_hash,
    classify_name,
    covered_kinds,
    discover_landing,
    parse_landing_file,
)
from spark.tables import TABLES

SAMPLES = REPO_ROOT / "samples" / "landing"

MQSC = """\
5724-H72 (C) Copyright IBM Corp. 1994, 2025.
Starting MQSC for queue manager QMA.


     1 : DISPLAY CLUSQMGR(*) ALL
AMQ8441I: Display Cluster Queue Manager details.
   CLUSQMGR(QMB)                           CHANNEL(TO.QMB)
   CLUSTER(CL1)                            CLWLWGHT(50)
   CONNAME(qmb.example.com(1414))          STATUS(RUNNING)
AMQ8441I: Display Cluster Queue Manager details.
   CLUSQMGR(QMC)                           CHANNEL(TO.QMC)
   CLUSTER(CL1)                            CONNAME(qmc.example.com(1414)
   STATUS(RUNNING)
     2 : DISPLAY QLOCAL(APP.*) ALL
AMQ8409I: Display Queue details.
   QUEUE(APP.L)                            TYPE(QLOCAL)
2 MQSC commands read.
No commands have a syntax error.
All valid MQSC commands were processed.
"""


@pytest.mark.parametrize("name, parser, ctype, stamp, reject", [
    ("config_060000.mqsc", "capture", "config", "06:00:00", None),
    ("CHSTATUS_235959.JSON", "capture", "chstatus", "23:59:59", None),
    ("xmitq_153000.amqsbcg", "xmitq", "xmitq", "15:30:00", None),
    ("puts.csv", "puts", None, None, None),
    ("puts_late.jsonl", "puts", None, None, None),
    ("accounting.amqsmon", "amqsmon", None, None, None),
    ("config_256000.mqsc", "capture", "config", None, "'256000' is not a time of day"),
    ("chstatus_0600.mqsc", "capture", "chstatus", None, "'0600' is not HHMMSS"),
    ("xmitq_.dmpmqmsg", "xmitq", "xmitq", None, "is not HHMMSS"),
    ("notes.txt", "unknown", None, None, None),
    ("config.mqsc", "unknown", None, None, None),
])
def test_classify_name(name, parser, ctype, stamp, reject):
    got_parser, got_type, when, why = classify_name(name, "2026-11-20")
    assert (got_parser, got_type) == (parser, ctype)
    if stamp:
        assert when == datetime.fromisoformat(f"2026-11-20T{stamp}").replace(tzinfo=timezone.utc)
    else:
        assert when is None
    if reject:
        assert why.startswith("bad capture time in file name") and reject in why
    else:
        assert why is None


def test_covered_kinds_from_echoed_commands_and_fallbacks():
    # Only DISPLAY <kind>(*) without WHERE asks for a kind in full; DISPLAY QLOCAL(APP.*) does not.
    assert covered_kinds(MQSC, "config", ["CLUSQMGR", "QLOCAL"]) == ["CLUSQMGR"]
    text = "     1 : DISPLAY QMGR ALL\n     2 : dis q(*) type(qalias)\n     3 : DISPLAY CHSTATUS(*) WHERE(STATUS EQ RUNNING)\n"
    assert covered_kinds(text, "config", []) == ["QALIAS", "QMGR"]
    # REST (no echoed commands): the kinds it holds, and CHSTATUS for a chstatus capture even when empty.
    assert covered_kinds(None, "chstatus", []) == ["CHSTATUS"]
    assert covered_kinds(None, "config", ["QCLUSTER", "QMGR"]) == ["QCLUSTER", "QMGR"]


def test_attrs_hash_ignores_volatile_attributes_only():
    base = {"QUEUE": "APP.L", "TYPE": "QLOCAL", "CURDEPTH": "0", "PUT": "ENABLED"}
    assert attrs_hash("QLOCAL", base) == attrs_hash("QLOCAL", {**base, "CURDEPTH": "7", "IPPROCS": "2"})
    assert attrs_hash("QLOCAL", base) != attrs_hash("QLOCAL", {**base, "PUT": "DISABLED"})
    assert attrs_hash("QLOCAL", base) == attrs_hash("QLOCAL", dict(reversed(list(base.items()))))


def test_one_file_rows_and_reconciliation(tmp_path):
    folder = tmp_path / "2026-01-01" / "QMA"
    folder.mkdir(parents=True)
    (folder / "config_060000.mqsc").write_text(MQSC)
    _, [spec], _ = discover_landing(tmp_path)
    summary, rows = parse_landing_file(spec, "run-1")
    assert summary["records_read"] == 3 == summary["records_accepted"] + summary["records_quarantined"]
    assert (summary["records_accepted"], summary["records_quarantined"]) == (2, 1)
    objects = [dict(zip(TABLES["bronze.mqsc_objects"].columns, r)) for r in rows["bronze.mqsc_objects"]]
    assert [(o["kind"], o["object_key"], o["position"]) for o in objects] == [
        ("CLUSQMGR", "CLUSQMGR|QMB|TO.QMB|CL1", 6), ("QLOCAL", "QLOCAL|APP.L", 15)]
    assert {o["source_file"] for o in objects} == {"2026-01-01/QMA/config_060000.mqsc"}
    assert {o["ingest_run_id"] for o in objects} == {"run-1"}
    [problem] = [dict(zip(TABLES["silver.quarantine"].columns, r)) for r in rows["silver.quarantine"]]
    assert problem["position"] == 10 and problem["reason"].startswith("unbalanced parenthesis")
    assert "CONNAME(qmc.example.com(1414)" in problem["raw"]
    [capture] = [dict(zip(TABLES["bronze.capture_files"].columns, r)) for r in rows["bronze.capture_files"]]
    assert capture["complete"] is False and capture["kinds_covered"] == ["CLUSQMGR"]


def test_discovery_of_the_samples_and_bad_requests(tmp_path):
    dates, files, notes = discover_landing(SAMPLES)
    assert dates == ["2026-11-19", "2026-11-20"] and notes == []
    assert all(f.source_file.startswith(f.run_date + "/" + f.observing_qmgr + "/") for f in files)
    assert {f.parser for f in files} == {"capture", "puts", "xmitq", "amqsmon", "activity_trace"}  # QM5: channel agents
    with pytest.raises(LandingError, match="does not exist"):
        discover_landing(tmp_path / "nowhere")
    with pytest.raises(LandingError, match="no folder for run date 2026-01-01"):
        discover_landing(SAMPLES, ["2026-01-01"])
    with pytest.raises(LandingError, match="bad run date"):
        discover_landing(SAMPLES, ["20261120"])


def _cli(argv: list[str]) -> int:
    from clwl.cli.pipeline import add_ingest_command

    parser = argparse.ArgumentParser(prog="clwl")
    add_ingest_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_exits_2_with_one_line_when_the_landing_or_a_date_is_missing(tmp_path, capsys):
    assert _cli(["ingest", "--landing", str(tmp_path / "missing"), "--lake", str(tmp_path / "lake")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "landing folder" in err and "does not exist" in err
    assert _cli(["ingest", "--landing", str(SAMPLES), "--lake", str(tmp_path / "lake"), "--date", "2030-01-01"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no folder for run date 2030-01-01" in err
    with pytest.raises(SystemExit):  # argparse: not a date at all
        _cli(["ingest", "--date", "yesterday"])
    assert not (tmp_path / "lake").exists()


def test_import_clwl_and_the_cli_module_stay_free_of_pyspark():
    code = "import sys, clwl, clwl.cli.pipeline; sys.exit('pyspark' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(REPO_ROOT)).returncode == 0


def _capture(name: str, hhmm: str, covered: list[str], present: list[str], complete: bool = True) -> dict:
    return {"source_file": f"2026-01-01/QMA/{name}", "capture_time": datetime.fromisoformat(f"2026-01-01T{hhmm}"),
            "run_date": "2026-01-01", "kinds_covered": covered, "kinds_present": present, "complete": complete}


def _object(name: str, seq: int, kind: str, key: str, state: str = "h1", **attrs) -> dict:
    return {"source_file": f"2026-01-01/QMA/{name}", "seq": seq, "kind": kind, "object_key": key,
            "attrs_hash": state, **attrs}


def test_qmgr_history_carries_over_unknown_and_closes_on_full_absence():
    from spark.ingest import qmgr_history

    q = "QLOCAL|APP.L"
    captures = [
        _capture("config_090000.mqsc", "09:00", ["QLOCAL"], ["QLOCAL"]),
        _capture("config_060000.mqsc", "06:00", ["QLOCAL"], ["QLOCAL"]),  # arrives out of order
        _capture("config_100000.mqsc", "10:00", ["QLOCAL"], [], complete=False),  # a record was cut: unknown
        _capture("config_110000.mqsc", "11:00", ["QALIAS"], ["QALIAS"]),  # does not ask for QLOCAL at all
        _capture("config_120000.mqsc", "12:00", ["QLOCAL"], []),  # asks for every QLOCAL: APP.L is gone
    ]
    objects = [
        _object("config_060000.mqsc", 0, "QLOCAL", q, "h1"),
        _object("config_090000.mqsc", 0, "QLOCAL", q, "h1"),  # unchanged
        _object("config_090000.mqsc", 1, "QLOCAL", q, "h2"),  # the same object twice: the last one counts
    ]
    config, channels = qmgr_history(objects, captures)
    assert [(r["attrs_hash"], r["valid_from"].strftime("%H"), r["valid_to"] and r["valid_to"].strftime("%H"),
             r["seq"]) for r in config] == [("h1", "06", "09", 0), ("h2", "09", "12", 1)]
    assert channels == []


def test_qmgr_history_channel_inactive_only_from_a_full_clean_capture():
    from spark.ingest import qmgr_history

    def chs(name, seq, status):
        return _object(name, seq, "CHSTATUS", "CHSTATUS|TO.QMB|CURRENT", channel="TO.QMB", chltype="CLUSSDR",
                       status=status, xmitq="SYSTEM.CLUSTER.TRANSMIT.QUEUE", substate=None)

    captures = [
        _capture("config_060000.mqsc", "06:00", ["CLUSQMGR"], ["CLUSQMGR"]),
        _capture("chstatus_060000.mqsc", "06:00", ["CHSTATUS"], []),  # TO.QMB known from CLUSQMGR: INACTIVE
        _capture("chstatus_070000.mqsc", "07:00", ["CHSTATUS"], ["CHSTATUS"]),
        _capture("chstatus_080000.mqsc", "08:00", ["CHSTATUS"], [], complete=False),  # cut off: unknown
        _capture("chstatus_090000.mqsc", "09:00", ["CHSTATUS"], ["CHSTATUS"]),
        _capture("chstatus_100000.mqsc", "10:00", ["CHSTATUS"], []),
    ]
    objects = [
        _object("config_060000.mqsc", 0, "CLUSQMGR", "CLUSQMGR|QMB|TO.QMB|CL1", channel="TO.QMB",
                deftype="CLUSSDRA"),
        chs("chstatus_070000.mqsc", 0, "RUNNING"),
        chs("chstatus_090000.mqsc", 0, "retrying"),
    ]
    _, channels = qmgr_history(objects, captures)
    assert [(r["channel"], r["chltype"], r["status"], r["valid_from"].strftime("%H"),
             r["valid_to"] and r["valid_to"].strftime("%H")) for r in channels] == [
        ("TO.QMB", "CLUSSDR", "INACTIVE", "06", "07"),
        ("TO.QMB", "CLUSSDR", "RUNNING", "07", "09"),
        ("TO.QMB", "CLUSSDR", "RETRYING", "09", "10"),
        ("TO.QMB", "CLUSSDR", "INACTIVE", "10", None),
    ]


def _big_puts_file(tmp_path, tail: bytes = b"") -> Path:
    """A copy of QM1's sample puts.csv with its data rows repeated (fresh message ids) to 1,000 rows, a
    malformed row every 97th."""
    sample = (SAMPLES / "2026-11-19" / "QM1" / "puts.csv").read_text(encoding="utf-8").splitlines()
    header, data = sample[0], [line for line in sample[1:] if line.strip() and '"' not in line]
    msg_id = header.split(",").index("msg_id")
    lines = [header]
    for i in range(1000):
        fields = data[i % len(data)].split(",")
        fields[msg_id] = f"{i:048X}"
        if i % 97 == 5:
            fields = fields[:3]  # too few fields: quarantined
        lines.append(",".join(fields))
    folder = tmp_path / "2026-11-19" / "QM1"
    folder.mkdir(parents=True)
    target = folder / "puts.csv"
    target.write_bytes(("\n".join(lines) + "\n").encode() + tail)
    return tmp_path


@pytest.mark.parametrize("chunk", [64, 7, 10_000])
def test_a_puts_file_written_in_chunks_gives_the_rows_of_a_whole_parse(tmp_path, monkeypatch, chunk):
    """The parse task writes a large puts file's rows chunk by chunk as it parses (bounded memory): the rows
    and counts are those of parsing it whole, and rows read = accepted + quarantined."""
    import json

    import pyarrow.parquet as pq

    from spark.ingest import parse_tasks

    landing = _big_puts_file(tmp_path / "landing")
    _, [spec], _ = discover_landing(landing)
    whole_summary, whole = parse_landing_file(spec, "run-1")  # no spill: every row returned
    assert whole_summary["records_read"] == 1000 == whole_summary["records_accepted"] + whole_summary[
        "records_quarantined"] and whole_summary["records_quarantined"] == 11  # i % 97 == 5 for 11 of 1000

    monkeypatch.setattr(parse_tasks, "PUTS_CHUNK_ROWS", chunk)  # the module whose _parse_puts reads it
    scratch = tmp_path / "scratch"
    [summary] = [json.loads(s) for s in parse_tasks.parse_partition(iter([(0, [spec])]), "run-1", str(scratch))]
    assert {k: summary[k] for k in ("records_read", "records_accepted", "records_quarantined", "rows")} == {
        k: whole_summary[k] for k in ("records_read", "records_accepted", "records_quarantined", "rows")}
    files = sorted((scratch / "bronze.put_records").glob("*.parquet"))
    assert len(files) == (1 if chunk >= 1000 else -(-1001 // chunk))  # a file per chunk of lines, and the rest
    columns = TABLES["bronze.put_records"].columns
    written = [r for f in files for r in pq.read_table(f).to_pylist()]
    expected = [dict(zip(columns, r)) for r in whole["bronze.put_records"]]
    assert sorted(written, key=lambda r: r["position"]) == sorted(expected, key=lambda r: r["position"])


def test_a_puts_file_rejected_after_chunks_were_written_leaves_none_of_its_rows(tmp_path, monkeypatch):
    import json

    from spark.ingest import parse_tasks

    landing = _big_puts_file(tmp_path / "landing", tail=b"2026-11-19T10:00:00Z,QM1,\xff\xfe broken\n")
    _, [spec], _ = discover_landing(landing)
    monkeypatch.setattr(parse_tasks, "PUTS_CHUNK_ROWS", 64)
    scratch = tmp_path / "scratch"
    [summary] = [json.loads(s) for s in parse_tasks.parse_partition(iter([(0, [spec])]), "run-1", str(scratch))]
    assert summary["status"] == "rejected" and "not UTF-8" in summary["reason"]
    assert (summary["records_read"], summary["records_accepted"], summary["records_quarantined"]) == (1, 0, 1)
    assert not list((scratch / "bronze.put_records").glob("*.parquet"))  # the chunks written before are gone
    assert summary["rows"] == {"silver.quarantine": 1}


def test_code_shipped_to_a_cluster_holds_the_clwl_and_spark_packages_at_their_import_paths():
    """On a cluster (master not local) the executors import ``spark.ingest.parse_tasks`` from the zip that
    ``_ship_code`` adds: its entries must be the packages' import paths (``spark/ingest/...``), as in the repo."""
    import zipfile

    from spark.ingest.parse_step import _ship_code

    class Context:  # the one SparkContext method _ship_code calls, recording what it was given
        def __init__(self):
            self.py_files: list[str] = []

        def addPyFile(self, path: str) -> None:  # noqa: N802 - SparkContext's name
            self.py_files.append(path)

    local = Context()
    _ship_code(local, "local[2]")
    assert local.py_files == []  # local mode imports the code in place
    cluster = Context()
    _ship_code(cluster, "spark://cluster:7077")
    [shipped] = cluster.py_files
    names = set(zipfile.ZipFile(shipped).namelist())
    Path(shipped).unlink()
    repo = Path(REPO_ROOT)
    expected = {p.relative_to(repo).as_posix() for root in ("clwl", "spark") for p in (repo / root).rglob("*.py")}
    assert names == expected
    assert {"spark/ingest/__init__.py", "spark/ingest/parse_tasks.py", "clwl/parse/puts.py"} <= names


def test_the_ingest_package_imports_without_the_command_line_module():
    """spark.ingest is imported by the CLI, never the other way round (no import cycle)."""
    code = ("import sys, spark.ingest; "
            "sys.exit(any(m.startswith(('clwl.cli', 'clwl.pipeline_cli')) for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(REPO_ROOT)).returncode == 0


def test_every_channel_definition_is_its_own_object():
    """DISPLAY CHANNEL records of one capture are different objects (one per channel name): the configuration
    history must not see them as versions of one object."""
    from clwl.parse.common import MqscRecord
    from spark.ingest.parse_tasks import object_key

    a = MqscRecord("CHANNEL", {"CHANNEL": "TO.QM1", "CHLTYPE": "CLUSRCVR"}, "config.mqsc", 3, "AMQ8414I")
    b = MqscRecord("CHANNEL", {"CHANNEL": "TO.QM2", "CHLTYPE": "CLUSSDR"}, "config.mqsc", 9, "AMQ8414I")
    assert object_key(a) == "CHANNEL|TO.QM1" and object_key(b) == "CHANNEL|TO.QM2"
    moved = MqscRecord("CHANNEL", {"CHANNEL": "TO.QM1", "CHLTYPE": "CLUSRCVR"}, "config_2.mqsc", 7, "AMQ8414I")
    assert object_key(moved) == object_key(a)  # the same channel in a later capture: the same object

"""`clwl query`: SQL over the lake's Delta tables by bare name, answered by DataFusion over deltalake's tables,
without pyspark (the read-only attack corpus is tests/unit/test_query_readonly.py). The tiny lake here is
written by deltalake itself; tests/spark/test_quality_publish.py runs the same command on tables Spark
published."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

# Plain imports, not importorskip: the pipeline extra (pyarrow, deltalake) is installed wherever the tests run,
# so a missing query engine fails these tests instead of skipping them.
import deltalake
import pyarrow as pa
import pytest

from clwl.cli.query import add_query_command
from clwl.lake.query import MAX_CELL, _replace_string_literal, _with_seconds, discover_tables

DAY = dt.date(2026, 11, 20)
UTC = dt.timezone.utc


def _ts(h: int, m: int) -> dt.datetime:
    return dt.datetime(2026, 11, 20, h, m, tzinfo=UTC)


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("query") / "lake"
    ts = pa.timestamp("us", tz="UTC")
    replay = pa.table({
        "run_date": pa.array([DAY] * 4, pa.date32()),
        "sending_qmgr": ["QM1", "QM1", "QM1", "QM2"],
        "msg_id": ["m1", "m2", "m3", "m4"],
        "put_time": pa.array([_ts(10, 0), _ts(10, 1), _ts(10, 2), _ts(11, 0)], ts),
        "queue": ["APP.ORDERS", "APP.ORDERS", "APP.NOPE", "APP.ORDERS"],
        "qmgr": ["QM2", "QM3", None, "QM2"],
        "error": [None, None, "MQRC_UNKNOWN_OBJECT_NAME", None],
        "length": pa.array([100, 2000, 10, 5], pa.int64()),
    })
    deltalake.write_deltalake(str(root / "gold" / "routing_replay"), replay, partition_by=["run_date"])
    summary = pa.table({
        "run_id": ["r1"],
        "run_date": pa.array([DAY], pa.date32()),
        "started_at": pa.array([_ts(23, 0)], ts),
        "deviation": pa.array([float("nan")], pa.float64()),
        "table_versions": pa.array([[("gold.routing_replay", 0), ("silver.message_events", 3)]],
                                   pa.map_(pa.string(), pa.int64())),
    })
    deltalake.write_deltalake(str(root / "gold" / "run_summary"), summary)
    deltalake.write_deltalake(str(root / "silver" / "quarantine"),
                              pa.table({"source_file": ["QM1.csv"], "reason": ["bad timestamp"]}))
    deltalake.write_deltalake(str(root / "silver" / "message_events"), pa.table({"msg_id": ["m1", "m2"]}))
    deltalake.write_deltalake(str(root / "bronze" / "message_events"), pa.table({"msg_id": ["m1", "m2", "m9"]}))
    (root / "reports" / "2026-11-20").mkdir(parents=True)  # not a table: ignored
    (root / "gold" / "half_written").mkdir()  # no _delta_log: ignored
    return root


def run(*argv: str) -> tuple[int, str, str]:
    """The command as `clwl query` runs it, in a fresh interpreter (also proves it never imports pyspark)."""
    code = (
        "import sys\n"
        "from clwl.cli import main\n"
        "rc = main(['query', *sys.argv[1:]])\n"
        "assert 'pyspark' not in sys.modules and 'py4j' not in sys.modules, 'pyspark was imported'\n"
        "sys.exit(rc)\n"
    )
    p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def test_tables_by_bare_name_gold_first_and_by_layer(lake):
    names = discover_tables(lake)
    assert names["routing_replay"] == lake / "gold" / "routing_replay"
    assert names["quarantine"] == lake / "silver" / "quarantine"
    assert names["message_events"] == lake / "silver" / "message_events"  # silver wins over bronze
    assert names["bronze_message_events"] == lake / "bronze" / "message_events"
    assert "half_written" not in names and "reports" not in names


def test_readable_table(lake):
    rc, out, err = run("SELECT qmgr, count(*) AS n, sum(length) AS bytes FROM routing_replay "
                       "WHERE error IS NULL GROUP BY qmgr ORDER BY qmgr", "--lake", str(lake))
    assert rc == 0, err
    assert out.splitlines() == [  # tabulate's "simple" layout; numbers to the right
        "qmgr      n    bytes",
        "------  ---  -------",
        "QM2       2      105",
        "QM3       1     2000",
        "(2 rows)",
    ]


def test_formats_csv_and_json_alias(lake):
    sql = "SELECT msg_id, qmgr, put_time, length FROM routing_replay WHERE sending_qmgr = 'QM1' ORDER BY msg_id"
    rc, out, err = run(sql, "--lake", str(lake), "--format", "csv")
    assert rc == 0, err
    assert out.splitlines() == [  # NULL is an empty field
        "msg_id,qmgr,put_time,length",
        "m1,QM2,2026-11-20T10:00:00+00:00,100",
        "m2,QM3,2026-11-20T10:01:00+00:00,2000",
        "m3,,2026-11-20T10:02:00+00:00,10",
    ]
    as_json = run(sql, "--lake", str(lake), "--format", "json")
    assert as_json[0] == 0 and run(sql, "--lake", str(lake), "--json") == as_json
    assert [json.loads(line)["msg_id"] for line in as_json[1].splitlines()] == ["m1", "m2", "m3"]


def test_long_cells_cut_unless_wide(lake):
    long = "why " * 30  # 120 characters, 119 once the trailing space is trimmed
    sql = f"SELECT '{long}' AS why, 1 AS n"
    rc, out, err = run(sql, "--lake", str(lake))
    assert rc == 0
    assert out.splitlines()[2].startswith(long[:MAX_CELL - 3] + "...")
    assert long.strip() not in out
    assert err == f"clwl query: 1 cell cut at {MAX_CELL} characters; --wide shows them whole\n"
    rc, out, err = run(sql, "--lake", str(lake), "--wide")
    assert rc == 0 and err == ""
    assert out.splitlines()[2].startswith(long.strip() + "  ")
    rc, out, _ = run(sql, "--lake", str(lake), "--format", "csv")
    assert out.splitlines()[1] == long.strip() + ",1"  # csv and json never cut


@pytest.mark.parametrize("condition, msg_ids", [
    # put_time: m1 10:00, m2 10:01, m3 10:02, m4 11:00 (UTC), from the fixture
    ("put_time < '2026-11-20 10:02'", ["m1", "m2"]),  # minutes without seconds: 10:02:00
    ("put_time < '2026-11-20 10:02:00'", ["m1", "m2"]),  # DataFusion's own form: the same answer
    ("put_time >= '2026-11-20T11:00Z'", ["m4"]),
    ("put_time > '2026-11-20 11:00+01:00'", ["m2", "m3", "m4"]),  # 11:00 at +01:00 is 10:00 UTC
    ("put_time < '2026-11-20 11'", ["m1", "m2", "m3"]),  # an hour alone: 11:00:00
    ("put_time < TIMESTAMP '2026-11-20 10:01'", ["m1"]),
    ("put_time BETWEEN '2026-11-20 10:01' AND '2026-11-20 10:02'", ["m2", "m3"]),
])
def test_timestamp_literals_without_seconds(lake, condition, msg_ids):
    rc, out, err = run(f"SELECT msg_id FROM routing_replay WHERE {condition} ORDER BY msg_id", "--lake", str(lake),
                       "--json")
    assert rc == 0, err
    assert [json.loads(line)["msg_id"] for line in out.splitlines()] == msg_ids


def test_a_timestamp_that_cannot_be_read_says_how_to_write_one(lake):
    rc, out, err = run("SELECT msg_id FROM routing_replay WHERE put_time < '2026-11-20 noon'", "--lake", str(lake))
    assert rc == 2 and out == "" and len(err.splitlines()) == 1
    assert "Error parsing timestamp from '2026-11-20 noon'" in err
    assert "timestamps are written 'YYYY-MM-DD HH:MM[:SS]'" in err


def test_timestamp_rewrite_touches_only_that_string():
    assert _with_seconds("2026-11-20 14:00") == "2026-11-20 14:00:00"
    assert _with_seconds("2026-11-20T14:00Z") == "2026-11-20T14:00:00Z"
    assert _with_seconds("2026-11-20 14+0100") == "2026-11-20 14:00:00+0100"
    assert _with_seconds("2026-11-20 14:00:00") is None  # already complete: the error was something else
    assert _with_seconds("noon") is None
    sql = ("SELECT \"2026-11-20 14:00\" FROM t -- '2026-11-20 14:00'\n"
           "WHERE a < '2026-11-20 14:00' AND b = 'x''2026-11-20 14:00' AND c > '2026-11-20 14:00'")
    assert _replace_string_literal(sql, "2026-11-20 14:00", "2026-11-20 14:00:00") == (
        "SELECT \"2026-11-20 14:00\" FROM t -- '2026-11-20 14:00'\n"
        "WHERE a < '2026-11-20 14:00:00' AND b = 'x''2026-11-20 14:00' AND c > '2026-11-20 14:00:00'")


def test_json_one_object_per_row_with_iso_timestamps(lake):
    rc, out, err = run("SELECT msg_id, put_time, run_date, qmgr FROM routing_replay ORDER BY msg_id LIMIT 3",
                       "--lake", str(lake), "--json")
    assert rc == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows == [
        {"msg_id": "m1", "put_time": "2026-11-20T10:00:00+00:00", "run_date": "2026-11-20", "qmgr": "QM2"},
        {"msg_id": "m2", "put_time": "2026-11-20T10:01:00+00:00", "run_date": "2026-11-20", "qmgr": "QM3"},
        {"msg_id": "m3", "put_time": "2026-11-20T10:02:00+00:00", "run_date": "2026-11-20", "qmgr": None},
    ]
    rc, out, err = run("SELECT table_versions, deviation, q.reason FROM run_summary, quarantine q",
                       "--lake", str(lake), "--json")
    assert rc == 0, err
    assert json.loads(out) == {"table_versions": {"gold.routing_replay": 0, "silver.message_events": 3},
                               "deviation": None, "reason": "bad timestamp"}  # NaN is not JSON: null
    rc, out, _ = run("SELECT count(*) AS n FROM bronze_message_events", "--lake", str(lake), "--json")
    assert json.loads(out) == {"n": 3}


@pytest.mark.parametrize("argv, message", [
    (["SELECT 1 +"], "clwl query: bad SQL: SQL error: ParserError"),
    (["SELEC 1"], "clwl query: bad SQL: SQL error: ParserError(\"Expected: an SQL statement, found: SELEC"),
    (["SELECT * FROM no_such_table"], "table 'datafusion.public.no_such_table' not found (tables in "),
    (["SELECT nope FROM routing_replay"], "clwl query: bad SQL: Schema error: No field named nope"),
])
def test_bad_sql_exits_2_with_one_line(lake, argv, message):
    rc, out, err = run(*argv, "--lake", str(lake))
    assert rc == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err


def test_missing_lake_exits_2(tmp_path):
    rc, out, err = run("SELECT 1", "--lake", str(tmp_path / "nowhere"))
    assert rc == 2 and out == ""
    assert err == f"clwl query: no lake at {tmp_path / 'nowhere'} (give --lake DIR, or set CLWL_LAKE)\n"


def test_registers_as_a_clwl_subcommand(lake, capsys):
    parser = argparse.ArgumentParser(prog="clwl")
    add_query_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["query", "SELECT count(*) AS n FROM quarantine", "--lake", str(lake), "--json"])
    assert args.func(args) == 0
    assert capsys.readouterr().out == '{"n": 1}\n'


@pytest.mark.parametrize("sql", [
    "SELECT count(*) AS n FROM routing_replay",
    "  -- a comment first\n  select replace(queue, 'APP.', '') AS q FROM routing_replay WHERE msg_id = 'm1'",
    "WITH x AS (SELECT qmgr FROM routing_replay) SELECT count(*) AS n FROM x",
    "EXPLAIN SELECT * FROM routing_replay",
    "DESCRIBE routing_replay",
    "SHOW TABLES",
    "SELECT 'drop; insert' AS words",
])
def test_reading_statements_still_run(lake, sql):
    code, stdout, stderr = run(sql, "--lake", str(lake))
    assert code == 0, stderr


def test_whatif_tables_by_name(lake, tmp_path):
    """`--whatif NAME` answers from <lake>/whatif/NAME; an unknown or unsafe name is one line, exit 2."""
    import shutil

    wlake = tmp_path / "lake"
    shutil.copytree(lake, wlake)
    deltalake.write_deltalake(str(wlake / "whatif" / "w80" / "gold" / "routing_replay"),
                              pa.table({"msg_id": ["x1"], "qmgr": ["QM9"]}))
    code, out, err = run("SELECT qmgr FROM routing_replay", "--lake", str(wlake), "--whatif", "w80", "--json")
    assert code == 0 and json.loads(out) == {"qmgr": "QM9"}, err
    for name, says in (("nope", "no what-if 'nope'"), ("../gold", "not a what-if name")):
        code, out, err = run("SELECT 1", "--lake", str(wlake), "--whatif", name)
        assert code == 2 and says in err and len(err.splitlines()) == 1, err

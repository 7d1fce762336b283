"""`clwl query` bounds each query's time and memory (issue 40, item 1): a statement small enough to plan can still
run for ever (``generate_series(1, 1e11)``, a recursive CTE without an end) or want more memory than the machine
has (``repeat('x', 2000000000)`` built 8 GB). Each ends in one line and exit 2: the engine's own alarm and memory
pool where they reach, the command's watchdog where nothing can interrupt the engine. The real command runs in a
subprocess on a tiny lake written by deltalake itself; the limits are set low so that each case takes seconds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import deltalake
import pyarrow as pa
import pytest

from clwl.lake.published import write_published
from clwl.lake.query import QueryError, run_query

SERIES = "SELECT count(*) AS n FROM generate_series(1, 100000000000)"
ENDLESS_CTE = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) AS n FROM r"
BIG_HASH = ("SELECT max(n) AS n FROM (SELECT v % 10000000 AS k, count(*) AS n FROM generate_series(1, 20000000) g(v) "
            "GROUP BY k)")  # a hash table of 10M groups
BIG_SORT = "SELECT v FROM generate_series(1, 20000000) g(v) ORDER BY v DESC"
BIG_STRING = "SELECT length(repeat('x', 2000000000)) AS n"  # one 2 GB value: no memory pool counts it


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bounds") / "lake"
    deltalake.write_deltalake(str(root / "gold" / "routing_replay"), pa.table({"msg_id": ["m1", "m2"]}))
    write_published(root / "gold", {"routing_replay": 0}, {}, run_id="r1", run_date="2026-11-20")
    return root


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clwl", "query", *argv], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONFAULTHANDLER": ""})


@pytest.mark.parametrize("sql, limits, says", [
    (SERIES, ["--timeout", "1"], "stopped: the query ran past its time limit of 1 s (--timeout SECONDS gives it"),
    (ENDLESS_CTE, ["--timeout", "1"], "stopped: the query ran past its time limit of 1 s"),
    (BIG_HASH, ["--memory", "16"], "stopped: the query needs more than its 16 MiB of memory (--memory MIB gives"),
    (BIG_SORT, ["--memory", "16"], "stopped: the query needs more than its 16 MiB of memory"),
    (BIG_STRING, ["--memory", "64"], "stopped: the query needs more than its 64 MiB of memory"),
], ids=["a series of 1e11", "an endless recursive CTE", "a hash past the memory pool", "a sort past it",
        "a 2 GB string"])
def test_a_query_past_its_limits_is_one_line_and_exit_2(lake, sql, limits, says):
    p = _cli(sql, "--lake", str(lake), *limits)
    assert (p.returncode, p.stdout) == (2, ""), (p.returncode, p.stderr[-500:])
    assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith(f"clwl query: {says}"), p.stderr


def test_the_engine_stops_itself_at_the_limits(lake):
    """In the engine, without the command's watchdog: the alarm ends a running plan, the memory pool refuses a
    hash or a sort that outgrows it (no spill file is written instead), and the next query runs."""
    with pytest.raises(QueryError, match=r"^stopped: the query ran past its time limit of 1 s"):
        run_query(ENDLESS_CTE, lake, timeout=1)
    for sql in (BIG_HASH, BIG_SORT):
        with pytest.raises(QueryError, match=r"^stopped: the query needs more than its 16 MiB of memory"):
            run_query(sql, lake, memory_mb=16)
    assert run_query("SELECT count(*) AS n FROM routing_replay", lake, timeout=30).to_pylist() == [{"n": 2}]


@pytest.mark.parametrize("option, value", [("--timeout", "0"), ("--timeout", "\u0661\u0660"), ("--timeout", "1_0"),
                                           ("--memory", "8"), ("--memory", "-1")])
def test_the_limits_take_ascii_whole_numbers(lake, option, value):
    p = _cli("SELECT 1", "--lake", str(lake), option, value)
    assert p.returncode == 2 and f"argument {option}:" in p.stderr and p.stdout == "", p.stderr

"""A damaged lake is one line naming the damaged file, exit 2: never a reader that hangs (a FIFO), is killed for
memory (a link to /dev/zero) or dies with a traceback (JSON nested 100,000 deep). The real `clwl query` and
`clwl explain` run as subprocesses with a timeout, on a tiny lake written by deltalake itself (no Spark)."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Plain imports, not importorskip: the pipeline extra is installed wherever the tests run (make test), and a
# missing one must fail here rather than skip the lake's read-only promises silently.
import deltalake  # noqa: E402
import pyarrow as pa  # noqa: E402
import pytest

from clwl.lake.door import MAX_METADATA_BYTES, LakeFileError, check_delta_log, read_lake_file  # noqa: E402
from clwl.lake.published import POINTER_FILE, write_published  # noqa: E402

DAY = dt.date(2026, 11, 20)
TIMEOUT = 60  # seconds: a reader that blocks on a FIFO fails the test here instead of hanging the suite

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")


@pytest.fixture
def lake(tmp_path) -> Path:
    """A published lake: gold.routing_replay (one message, m1) named by gold/_published.json, and a silver
    history table explain reads once it has found the message."""
    root = tmp_path / "lake"
    deltalake.write_deltalake(str(root / "gold" / "routing_replay"), pa.table({
        "run_date": pa.array([DAY], pa.date32()), "sending_qmgr": ["QM1"], "msg_id": [PRESENT]}))
    deltalake.write_deltalake(str(root / "silver" / "config_history"), pa.table({"observing_qmgr": ["QM1"]}))
    write_published(root / "gold", {"routing_replay": 0})
    return root


def clwl(*argv: str) -> tuple[int, str, str]:
    try:
        p = subprocess.run([sys.executable, "-m", "clwl", *argv], capture_output=True, text=True, timeout=TIMEOUT,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"clwl {' '.join(argv)} still running after {TIMEOUT} s: it hangs on the damaged lake")
    return p.returncode, p.stdout, p.stderr


def query(lake: Path) -> tuple[int, str, str]:
    return clwl("query", "SELECT msg_id FROM routing_replay", "--lake", str(lake), "--format", "csv")


PRESENT = "414D5120514D31202020202020202020000000000000006D"  # the one message the tiny lake holds
# A well-formed message id the lake does not hold (explain refuses a malformed one before it reads the lake).
ABSENT = "414D5120514D3120202020202020202000000000000000AB"


def explain(lake: Path, msg_id: str = ABSENT) -> tuple[int, str, str]:
    return clwl("explain", msg_id, "--lake", str(lake))


def assert_one_line_naming(result: tuple[int, str, str], damaged: Path, command: str) -> None:
    rc, out, err = result
    assert "Traceback" not in err, err
    assert rc == 2, (rc, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"clwl {command}: ") and str(damaged) in lines[0], lines[0]


def test_the_healthy_lake_is_read(lake):
    # The same lake undamaged: query answers, explain gets past every metadata read to the message lookup.
    rc, out, err = query(lake)
    assert (rc, out.split()) == (0, ["msg_id", PRESENT]), err
    rc, out, err = explain(lake)
    assert rc == 2 and err.strip() == f"clwl explain: message {ABSENT} is not in the published gold.routing_replay", err


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    os.symlink("/dev/zero", path)


def _deep(path: Path) -> None:
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")


def _dangling(path: Path) -> None:  # not "no pointer": that would read every gold table at its latest version
    os.symlink(path.parent / "gone.json", path)


def _oversized(path: Path) -> None:  # sparse: nothing is written to disk
    with open(path, "wb") as f:
        f.truncate(MAX_METADATA_BYTES + 1)


@pytest.mark.parametrize("damage", [_fifo, _dev_zero, _deep, _dangling, _oversized],
                         ids=["fifo", "link-to-dev-zero", "nested-100000-deep", "dangling-link", "oversized"])
def test_a_damaged_pointer_file(lake, damage):
    pointer = lake / "gold" / POINTER_FILE
    pointer.unlink()
    damage(pointer)
    assert_one_line_naming(query(lake), pointer, "query")
    assert_one_line_naming(explain(lake), pointer, "explain")


@pytest.mark.parametrize("name", ["_last_checkpoint", "00000000000000000001.json"])
def test_a_fifo_in_a_gold_delta_log(lake, name):
    # _last_checkpoint as a FIFO blocked deltalake for good; a FIFO named as a commit is damage all the same.
    fifo = lake / "gold" / "routing_replay" / "_delta_log" / name
    os.mkfifo(fifo)
    assert_one_line_naming(query(lake), fifo, "query")
    assert_one_line_naming(explain(lake), fifo, "explain")


def test_a_fifo_in_a_silver_delta_log(lake):
    # query registers every table; explain reads silver history once it has found the message (PRESENT).
    fifo = lake / "silver" / "config_history" / "_delta_log" / "_last_checkpoint"
    os.mkfifo(fifo)
    assert_one_line_naming(query(lake), fifo, "query")
    assert_one_line_naming(explain(lake, PRESENT), fifo, "explain")


def test_the_report_reads_through_the_same_checks(lake):
    # The report's gold reader (clwl/report/read.py read_gold, no JVM) refuses the damage rather than hand it on.
    fifo = lake / "gold" / "routing_replay" / "_delta_log" / "_last_checkpoint"
    os.mkfifo(fifo)
    code = ("import datetime, sys\n"
            "from clwl.lake.door import LakeFileError\n"
            "from pathlib import Path\n"
            "from clwl.report.read import read_gold\n"
            "try:\n"
            "    read_gold(Path(sys.argv[1]), datetime.date(2026, 11, 20))\n"
            "except LakeFileError as e:\n"
            "    print(e)\n")
    try:
        p = subprocess.run([sys.executable, "-c", code, str(lake)], capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the report's reader still running after {TIMEOUT} s: it hangs on the damaged lake")
    assert p.returncode == 0, p.stderr
    assert str(fifo) in p.stdout and "FIFO" in p.stdout, p.stdout


def test_read_lake_file_bounds(tmp_path):
    ok = tmp_path / "ok.json"
    ok.write_bytes(b"{}")
    assert read_lake_file(ok) == b"{}"
    with pytest.raises(LakeFileError, match="more than the 1 a lake metadata file may have"):
        read_lake_file(ok, limit=1)
    with pytest.raises(FileNotFoundError):  # no file is the caller's answer (no pointer: a lake from before it)
        read_lake_file(tmp_path / "missing.json")
    # A link to a regular file is followed (the documented choice); a table without a log is the caller's case.
    link = tmp_path / "link.json"
    link.symlink_to(ok)
    assert read_lake_file(link) == b"{}"
    check_delta_log(tmp_path / "no-table")


def _staged_copy(lake: Path) -> None:
    """A run's staging copy of routing_replay (staging/ holds a run's gold tables before the quality gate):
    rows nobody published, which must never answer for the published table."""
    deltalake.write_deltalake(str(lake / "staging" / "routing_replay"), pa.table({
        "run_date": pa.array([DAY], pa.date32()), "sending_qmgr": ["QM1"], "msg_id": ["UNPUBLISHED"]}))


def _no_table(lake: Path) -> Path:
    table = lake / "gold" / "routing_replay"
    shutil.rmtree(table)
    return table


def _no_commit(lake: Path) -> Path:  # the folder and its log are there, the published commit is not
    table = lake / "gold" / "routing_replay"
    (table / "_delta_log" / "00000000000000000000.json").unlink()
    return table


@pytest.mark.parametrize("damage, reason", [(_no_table, "no Delta table there"), (_no_commit, "its log holds no commit")],
                         ids=["table-gone", "commit-gone"])
def test_a_published_table_that_cannot_be_read_is_never_answered_from_staging(lake, damage, reason):
    _staged_copy(lake)
    table = damage(lake)
    rc, out, err = query(lake)
    assert (rc, out) == (2, "") and len(err.splitlines()) == 1, err
    assert err.startswith("clwl query: the published table routing_replay (version 0 in ") and " is unreadable" in err
    assert "UNPUBLISHED" not in err
    rc, out, err = clwl("published", "--lake", str(lake))
    assert rc == 0 and f"routing_replay: version 0 MISSING: {reason} ({table})" in out, (out, err)
    assert "the lake is damaged: routing_replay cannot be read at the published version" in err
    rc, out, _ = clwl("published", "--lake", str(lake), "--json")
    recipes = json.loads(out)
    assert recipes["tables"] == {} and recipes["missing"] == {
        "routing_replay": {"version": 0, "path": str(table), "reason": reason}}
    # The staged table stays addressable by its folder's name, never by the bare name.
    rc, out, err = clwl("query", "SELECT msg_id FROM staging_routing_replay", "--lake", str(lake), "--format", "csv")
    assert rc == 2 and "is unreadable" in err, err  # the lake as a whole is refused until the table is restored


@pytest.mark.parametrize("version, says", [(-5, "-5"), (1.5, "1.5"), ("0", '"0"'), (True, "true")])
def test_a_published_version_that_is_no_delta_version(lake, version, says):
    pointer = lake / "gold" / POINTER_FILE
    pointer.write_text(json.dumps({"format": 1, "tables": {"routing_replay": version}}), encoding="utf-8")
    for command in (("query", "SELECT 1"), ("published",)):
        rc, out, err = clwl(*command, "--lake", str(lake))
        assert (rc, out) == (2, ""), (command, err)
        assert err.splitlines() == [f"clwl {command[0]}: {pointer} is not a valid published-versions file (the version "
                                    f"of 'routing_replay' is {says}, not a Delta version: a whole number from 0)"], err

"""The edges of the lake-reading commands that gave a traceback instead of one line and exit 2 (issue 40 item 3):
a run date without a day after it or before it, a ``--lake`` path that cannot even be looked at (a name over 255
bytes, a folder on the way that cannot be searched), and an integer of more than 4,300 digits in the lake's
metadata (``gold/_published.json``, the lock file). Each through the real command line: ``clwl.cli.main`` as the
other CLI tests run it, and a subprocess where the process itself must lack a permission."""

from __future__ import annotations

import ctypes
import datetime as dt
import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clwl.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "landing"
RANGE = "out of range: run dates go from 0001-01-02 to 9999-12-30"

#: The nine commands that read a lake, each with what it needs besides its --lake (advise: real captures, a queue
#: and a target, so that only the lake can be what is refused).
LAKE_COMMANDS = {
    "lint": ["lint", "--date", "2026-11-20"],
    "drift": ["drift", "--date", "2026-11-20"],
    "advise": ["advise", "--mqsc", str(SAMPLES / "2026-11-20" / "QM1"), "--queue", "APP.ORDERS",
               "--target", "QM1=20,QM2=50,QM3=30", "--date", "2026-11-20"],
    "blast": ["blast", "--date", "2026-11-20"],
    "explain": ["explain", "414D5120514D3120202020202020202000000000000000AB"],  # a well-formed id: a malformed one is refused first
    "published": ["published"],
    "query": ["query", "SELECT 1"],
    "metrics": ["metrics"],
    "trend": ["trend"],
}


def clwl(argv: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as e:  # argparse refuses a bad --date itself: its usage, then the one error line
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def one_line(code: int, out: str, err: str, command: str) -> str:
    """The one line the command said (argparse's usage lines before its error line left out), exit 2."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if not line.startswith(("usage:", " "))]
    assert code == 2 and out == "" and len(lines) == 1, (code, out, err)
    assert lines[0].startswith(f"clwl {command}: "), lines[0]
    return lines[0]


# ------------------------------------------------------------------------------------ run dates at the ends
@pytest.mark.parametrize("argv", [
    ["drift", "--date", "9999-12-31"],  # day_bounds: the end of the day is past the last date
    ["drift", "--date", "0001-01-01"],  # drift.window: the day before is before the first date
    ["drift", "--date", "2026-11-20", "--since", "0001-01-01"],
    ["blast", "--date", "9999-12-31"],  # silver.load_timelines' day bounds
    ["blast", "--date", "0001-01-01"],
], ids=" ".join)
def test_a_run_date_without_a_day_after_or_before_is_one_line(argv, tmp_path, capsys):
    line = one_line(*clwl([*argv, "--lake", str(tmp_path)], capsys), argv[0])
    assert RANGE in line, line


# ------------------------------------------------------------------------------------ a --lake not looked at
@pytest.mark.parametrize("command", sorted(LAKE_COMMANDS))
def test_a_lake_path_with_a_name_over_255_bytes_is_one_line(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # (no ./lake is made or read)
    lake = tmp_path / ("x" * 256) / "lake"
    line = one_line(*clwl([*LAKE_COMMANDS[command], "--lake", str(lake)], capsys), command)
    assert "cannot look at" in line and "File name too long" in line, line


def _without_permission_override():
    """A preexec_fn for a child that is refused what its permissions refuse: as root, the capabilities that let
    root past them are dropped from the child's bounding set (its capabilities after exec)."""
    if os.geteuid() != 0:
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def drop() -> None:
        for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    return drop


@pytest.fixture
def unsearchable(tmp_path):
    """A lake under a folder that cannot be searched (mode 000)."""
    parent = tmp_path / "locked"
    (parent / "lake").mkdir(parents=True)
    parent.chmod(0)
    yield parent / "lake"
    parent.chmod(0o755)


def _child(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120, cwd=cwd,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          preexec_fn=_without_permission_override())


@pytest.mark.parametrize("command", sorted(LAKE_COMMANDS))
def test_a_lake_under_a_folder_that_cannot_be_searched_is_one_line(command, unsearchable, tmp_path):
    try:  # first: is such a child refused at all (a kernel may refuse the capability drop)?
        probe = _child(["-c", f"import os; os.stat({str(unsearchable)!r})"], tmp_path)
    except subprocess.SubprocessError as exc:
        pytest.skip(f"cannot run a child without root's permission override: {exc}")
    if "PermissionError" not in probe.stderr:
        pytest.skip(f"a child can search a folder of mode 000 here: {probe.stderr[-300:]}")
    p = _child(["-m", "clwl", *LAKE_COMMANDS[command], "--lake", str(unsearchable)], tmp_path)
    line = one_line(p.returncode, p.stdout, p.stderr, command)
    assert "cannot look at" in line and "Permission denied" in line, line


# ------------------------------------------------------------------------------------ integers too long
@pytest.fixture
def lake(tmp_path) -> Path:
    """A published lake written by deltalake itself (no Spark): gold.routing_replay named by _published.json."""
    pa = pytest.importorskip("pyarrow")
    deltalake = pytest.importorskip("deltalake")
    from clwl.lake.published import write_published

    root = tmp_path / "lake"
    deltalake.write_deltalake(str(root / "gold" / "routing_replay"), pa.table({
        "run_date": pa.array([dt.date(2026, 11, 20)], pa.date32()), "sending_qmgr": ["QM1"], "msg_id": ["414D5120514D3120202020202020202000000000000000AB"]}))
    write_published(root / "gold", {"routing_replay": 0})
    return root


@pytest.mark.parametrize("command", ["query", "published", "explain", "metrics", "trend"])
def test_an_integer_of_5000_digits_in_the_published_pointer_is_one_line(command, lake, capsys):
    pointer = lake / "gold" / "_published.json"
    text = pointer.read_text()
    assert '"routing_replay": 0' in text
    pointer.write_text(text.replace('"routing_replay": 0', '"routing_replay": ' + "9" * 5_000))
    line = one_line(*clwl([*LAKE_COMMANDS[command], "--lake", str(lake)], capsys), command)
    assert f"{pointer} holds an integer too long to read (over 4,300 digits)" in line, line


def test_an_integer_of_5000_digits_in_the_lock_file_is_still_a_refusal_naming_the_lock(tmp_path):
    """The lock file is read by the writers only (clwl run, clwl ingest, the DAG tasks: lake_lock, before Spark
    starts), to say who holds the lake: a file they cannot read says nobody, it never stops them with a
    traceback. read_lake_json itself says why in one line."""
    from clwl.lake.lake_files import LakeFileError, read_lake_json
    from clwl.lake.lock import LakeBusy, lake_lock, lock_path, read_holder

    lake = tmp_path / "lake"
    lake.mkdir()
    path = lock_path(lake)
    path.write_text('{"pid": ' + "9" * 5_000 + ', "host": "elsewhere"}\n')
    with pytest.raises(LakeFileError, match=r"_lock holds an integer too long to read \(over 4,300 digits\)"):
        read_lake_json(path)
    assert read_holder(lake) == {}
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another writer holds the lake
        with pytest.raises(LakeBusy, match=r"in use by another process .*lock file"):
            with lake_lock(lake, wait=0):
                pass
    finally:
        os.close(fd)

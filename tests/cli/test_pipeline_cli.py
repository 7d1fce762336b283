"""`clwl run` / `clwl ingest` before Spark does any work: the tool's own first line comes at once, and what cannot
run is refused in one line with exit 2 instead of a Spark start and a traceback. `clwl --version`.

Each case runs the real command in a child process (as a user would), so what reaches stdout/stderr is exactly
what the user sees; none of them starts a JVM.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clwl.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "landing"


def clwl(*args: str, env: dict | None = None, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clwl", *args], cwd=cwd, env=env or dict(os.environ),
                          capture_output=True, text=True, timeout=timeout)


def test_version_is_the_installed_package_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"clwl {importlib.metadata.version('clwl-analytics')}\n"
    done = clwl("--version")  # `python -m clwl` too
    assert (done.returncode, done.stdout) == (0, f"clwl {importlib.metadata.version('clwl-analytics')}\n")


@pytest.mark.parametrize("command", ["run", "ingest"])
@pytest.mark.parametrize("layout", ["empty", "no date folder"])
def test_a_landing_without_run_dates_is_refused_in_one_line(tmp_path, command, layout):
    """Nothing to process: exit 2 and one line, before Spark starts (it used to start Spark and exit 0)."""
    landing = tmp_path / "landing"
    landing.mkdir()
    if layout == "no date folder":  # what ingest would skip: a folder not named by a date, a hidden one, a file
        (landing / "QM1").mkdir()
        (landing / ".2026-11-20").mkdir()
        (landing / "2026-13-45").mkdir()
        (landing / "notes.txt").write_text("x")
    started = time.monotonic()
    done = clwl(command, "--landing", str(landing), "--lake", str(tmp_path / "lake"))
    assert done.returncode == 2
    assert done.stdout == ""
    hint = "; the folder is empty (the bundled sample estate is samples/landing)" if layout == "empty" else ""
    assert done.stderr.splitlines() == [f"clwl {command}: {landing}: no run date folders "
                                        f"(expected <landing>/<YYYY-MM-DD>/<QM>/<file>){hint}"]
    assert time.monotonic() - started < 20  # no JVM was started
    assert not (tmp_path / "lake").exists()


@pytest.mark.parametrize("command", ["run", "ingest"])
@pytest.mark.parametrize("java_home", ["empty dir", "unset"])
def test_without_java_one_line_and_exit_2(tmp_path, command, java_home):
    """No Java: one line naming the fix, exit 2, at once (it used to retry three times and end in a traceback).
    Spark's launcher runs $JAVA_HOME/bin/java when JAVA_HOME is set, else the java on PATH: neither is here."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "CLWL_SPARK_VERBOSE")}
    env["PATH"] = str(Path(sys.executable).parent)  # the venv's bin: python and clwl, no java
    assert not (Path(sys.executable).parent / "java").exists()
    if java_home == "empty dir":
        (tmp_path / "jdk").mkdir()
        env["JAVA_HOME"] = str(tmp_path / "jdk")
    started = time.monotonic()
    done = clwl(command, "--landing", str(SAMPLES), "--lake", str(tmp_path / "lake"), "--date", "2026-11-20",
                env=env)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"clwl {command}: Spark needs Java: ")
    assert lines[0].endswith("install a JDK 17 or set JAVA_HOME")
    assert (f"JAVA_HOME={tmp_path / 'jdk'} has no bin/java" if java_home == "empty dir"
            else "no java on PATH and JAVA_HOME is not set") in lines[0]
    assert time.monotonic() - started < 20


def test_a_busy_lake_is_refused_before_spark_is_even_mentioned(tmp_path):
    """The lake's lock comes before Spark (issue 40 item 7): with the lock held by another process, `clwl run`
    says only the one line naming the holder, within 10 s, exit 2, and never "starting Spark"."""
    from clwl.lake.lock import lake_lock

    env = {k: v for k, v in os.environ.items()
           if k not in ("CLWL_SPARK_VERBOSE", "CLWL_LOCK_WAIT", "CLWL_SPARK_MASTER")}
    lake = tmp_path / "lake"
    with lake_lock(lake, purpose="test_pipeline_cli"):
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "clwl", "run", "--landing", str(SAMPLES), "--lake", str(lake),
                                 "--date", "2026-11-20"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        first = proc.stderr.readline()
        elapsed = time.monotonic() - started
        out, err = proc.communicate(timeout=300)
    assert first.startswith(f"clwl run: the lake {lake} is in use by pid {os.getpid()} ")
    assert "test_pipeline_cli" in first and "CLWL_LOCK_WAIT=<seconds>" in first
    assert elapsed < 10, f"refused after {elapsed:.1f} s"
    assert proc.returncode == 2 and out == "" and err == ""


def test_verbose_is_an_option_of_run_and_ingest(capsys):
    for command in ("run", "ingest"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--verbose" in capsys.readouterr().out


def test_an_unknown_trace_time_zone_is_refused_before_spark(tmp_path):
    """--trace-tz names the zone amqsact printed local times in; a name that is no zone is one line, exit 2,
    and nothing starts (no lake is written)."""
    import subprocess
    import sys

    for command in ("run", "ingest"):
        p = subprocess.run([sys.executable, "-m", "clwl", command, "--trace-tz", "Mars/Base", "--lake",
                            str(tmp_path / "lake")], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, p.stderr
        assert p.stderr.strip() == f"clwl {command}: --trace-tz Mars/Base: not a time zone name (e.g. UTC, Europe/London)"
        assert not (tmp_path / "lake").exists()


def test_a_run_with_one_blocked_date_among_published_ones_exits_4(capsys):
    """Issue 39 item 12: `clwl run` over two dates, the first published and the second blocked by the quality gate,
    exits 4 (EXIT_BLOCKED), not 0: every date must publish for exit 0 (docs/cli-contract.md). The outcome is the
    pipeline's own (spark.pipeline.RunOutcome, DateOutcome), printed by the command's own code; both dates are
    named, the blocked one with its failure."""
    from clwl.cli.exit_codes import EXIT_BLOCKED, EXIT_OK
    from clwl.cli.pipeline import _print_outcome
    from spark.pipeline import DateOutcome, RunOutcome

    good = DateOutcome("2026-11-19", published=True, messages=10)
    blocked = DateOutcome("2026-11-20", published=False, failures=["gold.routing_replay: an expectation failed"])
    assert _print_outcome(RunOutcome("r1", [good, blocked])) == EXIT_BLOCKED
    assert _print_outcome(RunOutcome("r2", [blocked, good])) == EXIT_BLOCKED
    assert _print_outcome(RunOutcome("r3", [good, DateOutcome("2026-11-20", published=True)])) == EXIT_OK
    out = capsys.readouterr().out
    assert "2026-11-20: BLOCKED by the quality gate" in out and "failed: gold.routing_replay" in out

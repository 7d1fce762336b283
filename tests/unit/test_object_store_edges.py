"""Issue 40 item 7, the parts that need neither Spark nor the store:

- whether a lease's holder is gone (clwl/lake/lock.py ``holder_gone``): a pid that is not running, a pid that runs
  another process now (its start time differs), a zombie; never a holder on another host, another boot or another
  pid namespace, and never a live holder;
- the one lines of the store: a list request refused with 403 is "access denied" (not "refused or could not be
  reached (403)"), a missing bucket is "bucket X does not exist";
- which run a day's report was made for (clwl/lake/reports.py), and `clwl report` on a local lake: the files
  fetched, where they went, the default date, a date without a report, a report that is not the published run's,
  --open;
- a bad ``--date`` value: the command's usage, then one error line, exit 2, in every command that takes one;
- the run's time breakdown counts the rollback of a killed publish.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clwl.cli import build_parser, main
from clwl.lake.lock import LakeBusy, holder_gone, lake_lock, process_start
from clwl.lake.published import write_published
from clwl.lake.reports import MARKER, NoReport, fetch_report, report_made_for

DAY = "2026-11-20"
HERE = socket.gethostname()


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_holder_on_this_host_whose_pid_is_gone_is_gone():
    pid = _dead_pid()
    assert holder_gone({"pid": pid, "host": HERE}) == f"pid {pid} on this host is gone"
    assert holder_gone({"pid": pid, "host": HERE, "started": "12345"}) is not None


def test_a_live_holder_is_not_gone_and_a_reused_pid_is():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = process_start(child.pid)
        assert started is not None and started.isdigit()
        assert holder_gone({"pid": child.pid, "host": HERE}) is None  # no start time recorded: its pid decides
        assert holder_gone({"pid": child.pid, "host": HERE, "started": started}) is None
        reused = holder_gone({"pid": child.pid, "host": HERE, "started": str(int(started) - 1)})
        assert reused and "another process now" in reused
        assert holder_gone({"pid": os.getpid(), "host": HERE, "started": process_start(os.getpid())}) is None
    finally:
        child.kill()
        child.wait()


def test_a_zombie_holder_is_gone():
    """Killed, not yet reaped by its parent (this test): its pid still answers kill(0), but it runs nothing."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    os.kill(child.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while "Z" not in Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[:1]:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    try:
        assert holder_gone({"pid": child.pid, "host": HERE}) == f"pid {child.pid} on this host is gone"
    finally:
        child.wait()


@pytest.mark.parametrize("other", [{"host": HERE + "-elsewhere"}, {"boot_id": "another-boot"},
                                   {"pid_ns": "pid:[1]"}, {"pid": "x"}, {"pid": 0}, {}], ids=str)
def test_a_holder_this_process_cannot_judge_is_never_taken_for_gone(other):
    holder = {"pid": _dead_pid(), "host": HERE, **other}
    if not other:
        holder = {}
    assert holder_gone(holder) is None


def test_the_local_lock_refusal_says_how_to_wait(tmp_path):
    with lake_lock(tmp_path / "lake", purpose="the first writer"):
        child = subprocess.run(
            [sys.executable, "-c", "import sys; from clwl.lake.lock import lake_lock\n"
             "with lake_lock(sys.argv[1]): pass", str(tmp_path / "lake")],
            capture_output=True, text=True, timeout=60, env={**os.environ, "CLWL_LOCK_WAIT": ""},
            cwd=Path(__file__).resolve().parents[2])
    assert child.returncode != 0
    last = child.stderr.strip().splitlines()[-1]
    assert LakeBusy.__name__ in last and "the first writer" in last and "CLWL_LOCK_WAIT=<seconds>" in last, last


# --------------------------------------------------------------------------------------------- the store's lines
def test_a_403_on_a_list_is_access_denied_and_a_missing_bucket_is_named():
    from obstore import exceptions as obe

    from clwl.lake.storage import _one_line, lake_root

    where = lake_root("s3://some-bucket/lake")
    denied = obe.GenericError("Generic S3 error: Error performing list request: ... Server returned non-2xx status "
                              "code: 403 Forbidden: <?xml version=\"1.0\"?>\n<Error><Code>SignatureDoesNotMatch</Code>")
    assert str(_one_line(where, denied)).startswith("s3://some-bucket/lake: access denied by the store")
    missing = obe.GenericError("Generic S3 error: Error performing list request: ... status code: 404 Not Found: "
                               "<?xml version=\"1.0\"?>\n<Error><Code>NoSuchBucket</Code>")
    line = str(_one_line(where, missing))
    assert "bucket some-bucket does not exist" in line and "never creates buckets" in line
    other = obe.GenericError("Generic S3 error: status code: 500 Internal Server Error: boom")
    assert "refused or could not be reached (500 Internal Server Error)" in str(_one_line(where, other))


# ------------------------------------------------------------------------------------------------ the report
def _report(lake: Path, day: str, run_id: str | None, *, summary_run: str | None = None, charts: int = 2) -> Path:
    folder = lake / "reports" / day
    (folder / "charts").mkdir(parents=True, exist_ok=True)
    (folder / "report.html").write_text(f"<html>{day}</html>")
    (folder / "summary.md").write_text(f"# {day}\n\nRun `{summary_run or run_id}`. Full report\n")
    for i in range(charts):
        (folder / "charts" / f"c{i}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes([i]))
    if run_id is not None:
        (folder / MARKER).write_text(json.dumps({"run_id": run_id, "run_date": day}))
    return folder


def _published(lake: Path, dates: dict[str, str]) -> None:
    (lake / "gold").mkdir(parents=True, exist_ok=True)
    write_published(lake / "gold", {"run_summary": 0}, dates, run_id=max(dates.values()))


def test_which_run_a_report_was_made_for(tmp_path):
    lake = tmp_path / "lake"
    assert report_made_for(lake / "reports", DAY) is None
    folder = _report(lake, DAY, "run-b", summary_run="run-a")
    assert report_made_for(lake / "reports", DAY) == "run-b"  # the marker, written last, decides
    (folder / MARKER).unlink()
    assert report_made_for(lake / "reports", DAY) == "run-a"  # a report from before the marker: its summary
    (folder / MARKER).write_text("{not json")
    assert report_made_for(lake / "reports", DAY) is None
    (folder / MARKER).write_text(json.dumps({"run_id": "run-c"}))
    (folder / "report.html").unlink()
    assert report_made_for(lake / "reports", DAY) is None  # no report.html: no report


def test_write_report_puts_the_marker_last(tmp_path, monkeypatch):
    """clwl.report.write_report writes report.html, summary.md, then the marker naming its run."""
    import clwl.report.build as build

    written: list[str] = []
    real = Path.write_text

    def spy(self, *a, **k):
        written.append(self.name)
        return real(self, *a, **k)

    monkeypatch.setattr(build, "gather", lambda *a, **k: None)
    monkeypatch.setattr(build, "build_report", lambda g: type("R", (), {"all_charts": []})())
    monkeypatch.setattr(build, "render_html", lambda rep: "<html/>")
    monkeypatch.setattr(build, "render_md", lambda rep: "# r\n")
    monkeypatch.setattr(build, "quality_docs", lambda root, run_id, day, folder: ("", "none"))  # no lake: no Data Docs
    monkeypatch.setattr(Path, "write_text", spy)
    html, md = build.write_report(build.Place(tmp_path / "lake", tmp_path / "reports"), DAY, "run-x")
    assert written == ["report.html", "summary.md"]
    assert json.loads((html.parent / MARKER).read_text()) == {"run_id": "run-x", "run_date": DAY}
    assert report_made_for(tmp_path / "reports", DAY) == "run-x"


def test_fetch_report_copies_every_file_report_html_first(tmp_path):
    from clwl.lake.door import Lake

    lake = tmp_path / "lake"
    _report(lake, DAY, "run-a")
    files = fetch_report(Lake(lake), DAY, tmp_path / "out")
    assert files[0] == tmp_path / "out" / "report.html"
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in files) == [
        MARKER, "charts/c0.png", "charts/c1.png", "report.html", "summary.md"]
    assert (tmp_path / "out" / "charts" / "c1.png").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(NoReport, match="no report for 2026-11-19"):
        fetch_report(Lake(lake), "2026-11-19", tmp_path / "out2")


def _clwl(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_clwl_report_fetches_the_latest_published_days_report(tmp_path, capsys, monkeypatch):
    lake = tmp_path / "lake"
    _published(lake, {"2026-11-19": "run-a", DAY: "run-b"})
    _report(lake, "2026-11-19", "run-a")
    _report(lake, DAY, "run-b", charts=3)
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    code, out, err = _clwl(capsys, "report", "--lake", str(lake), "--out", str(tmp_path / "out"))
    assert code == 0 and err == "", err
    assert out.splitlines() == [f"report of {DAY} (run run-b) from {lake}: 6 file(s) in {tmp_path / 'out'}",
                                f"  {tmp_path / 'out' / 'report.html'}", f"  {tmp_path / 'out' / 'summary.md'}"]
    assert len(list((tmp_path / "out" / "charts").iterdir())) == 3 and opened == []

    code, out, err = _clwl(capsys, "report", "--lake", str(lake), "--date", "2026-11-19", "--out",
                           str(tmp_path / "o2"), "--open", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["date"] == "2026-11-19" and doc["run_id"] == doc["published_run_id"] == "run-a"
    assert doc["report_html"] == str(tmp_path / "o2" / "report.html") and len(doc["files"]) == 5
    assert opened == [(tmp_path / "o2" / "report.html").as_uri()]

    code, out, err = _clwl(capsys, "report", "--lake", str(lake), "--open")  # no --out: a new temporary folder
    there = Path(out.splitlines()[1].strip())
    assert code == 0 and there.is_file() and opened[-1] == there.as_uri()


def test_clwl_report_says_when_the_report_is_not_the_published_runs(tmp_path, capsys):
    lake = tmp_path / "lake"
    _published(lake, {DAY: "run-b"})
    _report(lake, DAY, "run-a")  # a run killed after its publish left the previous run's report
    code, out, err = _clwl(capsys, "report", "--lake", str(lake), "--out", str(tmp_path / "out"))
    assert code == 0 and (tmp_path / "out" / "report.html").is_file()
    assert err.splitlines() == [f"clwl report: warning: the report of {DAY} is run run-a's, not the published run "
                                f"run-b's (a run stopped before its report); `clwl run --date {DAY}` writes it again"]


@pytest.mark.parametrize("case", ["no report", "not published", "blocked", "nothing published", "no out",
                                  "out is a file", "no lake"])
def test_clwl_report_refusals_are_one_line_exit_2(case, tmp_path, capsys):
    lake = tmp_path / "lake"
    argv = ["report", "--lake", str(lake), "--out", str(tmp_path / "out")]
    if case == "no report":
        _published(lake, {DAY: "run-b"})
        want = f"clwl report: no report for {DAY} in {lake} (it is published, but its report is not there)"
    elif case == "not published":
        _published(lake, {DAY: "run-b"})
        argv += ["--date", "2026-11-19"]
        want = f"clwl report: no report for 2026-11-19 in {lake} (it is not published)"
    elif case == "blocked":  # the gate stopped the date's only run: its Data Docs are what there is to see
        _published(lake, {DAY: "run-b"})
        site = lake / "reports" / "2026-11-19" / "quality-blocked"
        site.mkdir(parents=True)
        (site / "index.html").write_text("<html></html>")
        argv += ["--date", "2026-11-19"]
        want = (f"clwl report: no report for 2026-11-19 in {lake} (it is not published; the quality gate blocked "
                f"its last run: its results (Data Docs) are at {site / 'index.html'})")
    elif case == "nothing published":
        lake.mkdir()
        want = f"clwl report: no published date in {lake}: give --date YYYY-MM-DD"
    elif case == "no out":
        argv = argv[:3]
        want = "clwl report: give --out DIR (the folder to put the report in), --open, or both"
    elif case == "out is a file":
        (tmp_path / "out").write_text("x")
        want = f"clwl report: --out {tmp_path / 'out'}: not a folder"
    else:
        want = f"clwl report: no lake at {lake} (name it with --lake or $CLWL_LAKE)"
    code, out, err = _clwl(capsys, *argv)
    assert (code, out, err.splitlines()) == (2, "", [want])
    assert not (tmp_path / "out").is_dir()


# ------------------------------------------------------------------------------------------- a bad --date
def _commands_with_date() -> dict[str, list[str]]:
    """Every subcommand that takes --date, with what else it needs to get as far as reading it."""
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    needs = {"explain": ["MSGID"], "advise": ["--mqsc", "x", "--queue", "Q", "--target", "QM1=100"],
             "check": ["landing"]}
    return {name: needs.get(name, []) for name, p in sub.choices.items()
            if any("--date" in a.option_strings for a in p._actions)}


def test_every_command_with_a_date_answers_a_bad_one_with_its_usage_and_one_error_line(capsys):
    commands = _commands_with_date()
    assert {"run", "ingest", "check", "lint", "drift", "advise", "blast", "explain", "report"} <= set(commands)
    for name, rest in commands.items():
        for bad in ("2026-13-01", "", "20261120", "9999-12-31", "2026-11-20\x1b]0;x\x07"):
            code, out, err = _clwl(capsys, name, *rest, "--date", bad)
            lines = err.splitlines()
            errors = [line for line in lines if not line.startswith(("usage:", " "))]
            assert code == 2 and out == "", (name, bad, err)
            assert lines[0].startswith(f"usage: clwl {name} "), (name, bad, err)
            assert len(errors) == 1 and errors[0].startswith(f"clwl {name}: error: argument --date: "), (name, err)
            assert "\x1b" not in err and "\x07" not in err


# ------------------------------------------------------------------------------- the run's time breakdown
def test_the_runs_time_breakdown_counts_the_rollback(tmp_path, monkeypatch, capsys):
    """A publish killed earlier is rolled back at the start of the next run: its seconds are in the run's
    breakdown ("rollback"), not only in its total."""
    pytest.importorskip("pyspark")
    import spark.pipeline as pipeline
    import spark.publish as publish
    from clwl.cli.pipeline import _print_outcome
    from spark.config import PipelineConfig
    from spark.run import PipelineRun

    def settle(lake, session, progress):
        time.sleep(0.2)
        return {"routing_replay": "restored from 7 to 5"}

    monkeypatch.setattr(publish, "settle_before_writing", settle)
    monkeypatch.setattr(pipeline, "_checked_days", lambda *a, **k: None)
    monkeypatch.setattr(pipeline, "DATE_STAGES", ())
    run = PipelineRun(PipelineConfig(lake=tmp_path / "lake", landing=tmp_path), "run-x")
    outcome = pipeline._run_pipeline(run, [DAY], spark=object(), progress=lambda m: None, ingest_first=False)
    assert outcome.seconds["rollback"] >= 0.2
    # the printed figure from a fixed breakdown: the measured one is 0.2 s and more on a loaded machine
    outcome.seconds.update(rollback=0.2, total=1.2)
    _print_outcome(outcome)
    assert "(rollback 0.2 s)" in capsys.readouterr().out


def test_a_date_published_after_a_blocked_run_forgets_the_blocked_runs_data_docs(tmp_path, capsys):
    """A blocked run leaves its Data Docs in <reports>/<date>/quality-blocked/; the run that later publishes the
    date removes them (spark/stages.py report_stage), so `clwl report` no longer points at a run that was not
    published. The other dates' blocked pages and the date's own report stay."""
    from clwl.lake.reports import blocked_quality_docs, forget_blocked_quality_docs

    lake = tmp_path / "lake"
    for day in ("2026-11-19", DAY):
        site = lake / "reports" / day / "quality-blocked"
        site.mkdir(parents=True)
        (site / "index.html").write_text("<html></html>")
    (lake / "reports" / DAY / "report.html").write_text("<html></html>")
    assert blocked_quality_docs(lake / "reports", DAY) == lake / "reports" / DAY / "quality-blocked" / "index.html"

    forget_blocked_quality_docs(lake / "reports", DAY)
    assert blocked_quality_docs(lake / "reports", DAY) is None
    assert not (lake / "reports" / DAY / "quality-blocked").exists()
    assert (lake / "reports" / DAY / "report.html").is_file()
    assert blocked_quality_docs(lake / "reports", "2026-11-19") is not None
    forget_blocked_quality_docs(lake / "reports", "2026-11-18")  # nothing there: nothing to do, no error

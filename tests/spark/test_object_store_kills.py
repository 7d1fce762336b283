"""The lake on the object store, tried as a user with kills (issue 40 item 7), against the session's SeaweedFS
(tests/objectstore.py):

- a lake whose bucket does not exist is refused in one line before anything is written (SeaweedFS makes a bucket
  on the first put into it: `clwl run` used to publish a whole lake into a bucket made on the fly); the readers
  name the missing bucket too;
- a key the store refuses is "access denied" for a list request too (not "refused or could not be reached (403)");
- a lease whose holder is a process of this host that is gone is taken over at once (not after up to 120 s); a
  live holder's refusal says who holds it, where, when its lease expires and that CLWL_LOCK_WAIT waits;
- `clwl run` against a held lease prints no "starting Spark": the lease comes first;
- `clwl report` fetches a day's report, its pictures included, from the store;
- (extended: a whole pipeline on the store) a run killed after its publish moved the published pointer but before
  its report was written: the next run takes the dead run's lease over at once, says the date is unchanged and
  writes the published run's report in place of the previous run's, without Spark; `clwl report` fetches it.

Everything but the extended case runs without Spark, in this process (`clwl.cli.main`).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid

import pytest

from clwl.cli import main
from clwl.lake.door import Lake
from clwl.lake.lock import LakeBusy, lake_lock, process_start, read_holder
from clwl.lake.published import write_published
from clwl.lake.reports import MARKER, report_made_for
from clwl.lake.storage import StorageError, check_bucket, lake_root, list_prefix, put_object
from spark.config import REPO_ROOT

pytestmark = [pytest.mark.objectstore]

DAY = "2026-11-20"
LANDING = REPO_ROOT / "samples" / "landing"
HERE = socket.gethostname()
PNG = b"\x89PNG\r\n\x1a\n"


def _clwl(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store(object_store, monkeypatch):
    object_store.use(monkeypatch)
    for name in ("CLWL_LAKE", "CLWL_LOCK_WAIT", "CLWL_LEASE_SECONDS"):
        monkeypatch.delenv(name, raising=False)
    return object_store


def _lease(lake: str, holder: dict, seconds: float = 120) -> None:
    """Write the lease object as a writer that holds it would (clwl/lake/lock.py)."""
    expires = time.time() + seconds
    record = {"purpose": "clwl run run-killed", "since": "2026-11-20T01:00:00+00:00", "lease_seconds": seconds,
              "expires_at": expires, "expires": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(expires)),
              **holder}
    put_object(lake_root(lake) / "_lock", (json.dumps(record) + "\n").encode())


@pytest.fixture
def live_child():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield child
    child.kill()
    child.wait()


# ------------------------------------------------------------------------------------------- the bucket
def test_a_lake_in_a_bucket_that_does_not_exist_is_refused_before_anything_is_written(store, capsys):
    bucket = f"clwl-missing-{uuid.uuid4().hex[:8]}"
    lake = f"s3://{bucket}/lake"
    want = f"{lake}: bucket {bucket} does not exist (the lake never creates buckets: create it, or check the name " \
           f"and AWS_ENDPOINT_URL)"
    for argv in (["run", "--landing", str(LANDING), "--date", DAY], ["run", "--force", "--date", DAY],
                 ["ingest", "--landing", str(LANDING), "--date", DAY]):
        code, out, err = _clwl(capsys, *argv, "--lake", lake)
        assert (code, out, err.splitlines()) == (2, "", [f"clwl {argv[0]}: {want}"]), argv
    for argv in (["query", "SELECT 1"], ["published"], ["report", "--out", "x"], ["drift", "--date", DAY]):
        code, out, err = _clwl(capsys, *argv, "--lake", lake)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, (argv, err)
        assert f"bucket {bucket} does not exist" in err, (argv, err)
    with pytest.raises(StorageError, match="does not exist"):  # still not there: nothing made it
        check_bucket(lake_root(lake))


def test_a_key_the_store_refuses_is_access_denied(store, capsys, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    lake = store.lake_uri("denied")
    for argv in (["run", "--landing", str(LANDING), "--date", DAY], ["published"], ["query", "SELECT 1"]):
        code, out, err = _clwl(capsys, *argv, "--lake", lake)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, (argv, err)
        assert "access denied by the store" in err and "could not be reached" not in err, (argv, err)
        assert "not-the-secret" not in err


# -------------------------------------------------------------------------------------------- the lease
def test_a_lease_whose_holder_on_this_host_is_gone_is_taken_over_at_once(store):
    lake = store.lake_uri("dead-holder")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _lease(lake, {"pid": dead.pid, "host": HERE, "started": "1"})
    said: list[str] = []
    started = time.monotonic()
    with lake_lock(lake, purpose="the next writer", progress=said.append):
        assert read_holder(lake)["purpose"] == "the next writer"
        assert read_holder(lake)["started"] == process_start(os.getpid())  # the new lease names its process
    assert time.monotonic() - started < 10
    assert said == [f"the lake {lake}: took over the lease of pid {dead.pid} on {HERE} (clwl run run-killed), "
                    f"since 2026-11-20T01:00:00+00:00: pid {dead.pid} on this host is gone"]


def test_a_live_holders_refusal_says_when_its_lease_expires_and_how_to_wait(store, live_child):
    lake = store.lake_uri("live-holder")
    _lease(lake, {"pid": live_child.pid, "host": HERE, "started": process_start(live_child.pid)}, seconds=100)
    with pytest.raises(LakeBusy) as refused:
        with lake_lock(lake, purpose="the next writer"):
            pass
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith(f"the lake {lake} is in use by pid {live_child.pid} on {HERE} (clwl run run-killed), "
                           f"since 2026-11-20T01:00:00+00:00; its lease expires at "), line
    assert "unless renewed; its process is running on this host" in line
    assert line.endswith(f"only one writer at a time: set CLWL_LOCK_WAIT=<seconds> to wait for it (lease {lake}/_lock)")
    expiry = line.split("(in ", 1)[1].split(" s)", 1)[0]
    assert 90 <= int(expiry) <= 100, line

    other = store.lake_uri("other-host")
    _lease(other, {"pid": live_child.pid, "host": HERE + "-elsewhere"})
    with pytest.raises(LakeBusy, match="if that process is gone, the next writer takes the lease over then"):
        with lake_lock(other):
            pass


def test_clwl_run_says_nothing_of_spark_before_a_lease_refusal(store, live_child, capsys):
    lake = store.lake_uri("busy")
    _lease(lake, {"pid": live_child.pid, "host": HERE, "started": process_start(live_child.pid)})
    code, out, err = _clwl(capsys, "run", "--landing", str(LANDING), "--lake", lake, "--date", DAY)
    assert code == 2 and out == "", out  # no "starting Spark" before the refusal
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"clwl run: the lake {lake} is in use by pid {live_child.pid}")
    assert "CLWL_LOCK_WAIT" in lines[0]


# ------------------------------------------------------------------------------------------- clwl report
def test_clwl_report_fetches_a_report_and_its_pictures_from_the_store(store, capsys, tmp_path):
    lake = store.lake_uri("report")
    folder = Lake(lake).layer("reports") / DAY
    files = {"report.html": b"<html>report</html>", "summary.md": b"Run `run-b`.\n", "charts/a.png": PNG + b"a",
             "charts/b.png": PNG + b"b", MARKER: json.dumps({"run_id": "run-b", "run_date": DAY}).encode()}
    for name, data in files.items():
        put_object(folder / name, data)
    write_published(Lake(lake).layer("gold"), {"run_summary": 0}, {DAY: "run-b"}, run_id="run-b")
    code, out, err = _clwl(capsys, "report", "--lake", lake, "--out", str(tmp_path / "out"))
    assert code == 0 and err == "", err
    assert out.splitlines()[0] == f"report of {DAY} (run run-b) from {lake}: 5 file(s) in {tmp_path / 'out'}"
    for name, data in files.items():
        assert (tmp_path / "out" / name).read_bytes() == data, name
    code, out, err = _clwl(capsys, "report", "--lake", lake, "--date", "2026-11-19", "--out", str(tmp_path / "o"))
    assert (code, out, err.splitlines()) == (2, "", [f"clwl report: no report for 2026-11-19 in {lake} (it is not "
                                                      f"published)"])


# ------------------------------------------------------------------------- killed between publish and report
def _env(store, **more) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("AWS_") and k not in ("CLWL_LAKE", "CLWL_LOCK_WAIT", "CLWL_LEASE_SECONDS",
                                                     "CLWL_SPARK_VERBOSE")}
    return {**env, **store.env(), **more}


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.extended
def test_a_run_killed_before_its_report_gets_its_report_from_the_next_run(store, tmp_path):
    """The previous run's report is in place (made here: the marker names run-previous); a `clwl run` is killed
    (kill -9 of its process group, the JVM with it) after its publish moved the pointer, before its report. Its
    lease stays on the store (nothing releases it), unexpired. The next `clwl run` takes that lease over at once
    (its holder, a process of this host, is gone), finds the date unchanged, sees that the report is not the
    published run's and writes it, as that run's, without Spark."""
    lake = store.lake_uri("killed-report")
    reports = Lake(lake).layer("reports")
    put_object(reports / DAY / "report.html", b"<html>the previous run's report</html>")
    put_object(reports / DAY / MARKER, json.dumps({"run_id": "run-previous", "run_date": DAY}).encode())
    run = [sys.executable, "-m", "clwl", "run", "--landing", str(LANDING), "--lake", lake, "--date", DAY]
    # The longest lease there is: had the next run not taken it over, it would have been refused (no CLWL_LOCK_WAIT).
    killed = subprocess.Popen(run, env=_env(store, CLWL_TEST_KILL_BEFORE_REPORT="1", CLWL_LEASE_SECONDS="3600"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
                              start_new_session=True)
    out, err = killed.communicate(timeout=1500)
    assert killed.returncode == -9, (out[-3000:], err[-3000:])
    published = Lake(lake).published().dates[DAY]
    assert report_made_for(reports, DAY) == "run-previous"  # what the kill left: the previous run's report
    holder = read_holder(lake)
    assert holder["pid"] == killed.pid and not holder.get("released")
    assert holder["expires_at"] > time.time() + 600  # renewed every 1200 s: far from expiring

    again = subprocess.run(run, env=_env(store), capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    assert again.returncode == 0, (again.stdout[-3000:], again.stderr[-3000:])
    out = again.stdout
    assert "took over the lease of pid" in out and "on this host is gone" in out, out
    assert (f"{DAY}: the report there is run run-previous's, not the published run's: writing the report of "
            f"{published}") in out, out
    assert f"{DAY}: unchanged since {published}, published as is" in out
    assert "starting Spark" not in out  # the report is written without Spark
    assert report_made_for(reports, DAY) == published
    names = {name for name, _ in list_prefix(reports / DAY)}
    assert {"report.html", "summary.md", MARKER} <= names and any(n.endswith(".png") for n in names), names
    assert f"report: {reports / DAY / 'report.html'}" in out

    fetched = subprocess.run([sys.executable, "-m", "clwl", "report", "--lake", lake, "--out", str(tmp_path / "r")],
                             env=_env(store), capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert fetched.returncode == 0 and fetched.stderr == "", fetched.stderr
    assert f"Run `{published}`" in (tmp_path / "r" / "summary.md").read_text()
    assert all(p.read_bytes().startswith(PNG) for p in (tmp_path / "r").rglob("*.png"))

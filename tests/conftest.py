"""Shared fixtures. Spark is imported lazily, so unit tests that need no Spark never start a JVM."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.objectstore import object_store  # noqa: F401  (the session's S3-compatible server)

#: CI's time box (.ci/run sets it for `make test-extended`): past this moment (seconds since the epoch) a test not
#: yet started is skipped, saying so, rather than CI running out of its 90 minutes in the middle of one. The
#: deployment-scale files run first, in this order; `make test-extended` without the variable runs every test.
DEADLINE_ENV = "CLWL_TEST_DEADLINE"
EXTENDED_FIRST = ("test_standalone_cluster.py", "test_lake_on_object_store.py", "test_backfill.py",
                  "test_spark_connect.py",
                  "test_dag_on_object_store.py", "test_object_store_kills.py", "test_generated_estate_on_object_store.py")


def _deadline() -> float | None:
    import os

    value = os.environ.get(DEADLINE_ENV, "").strip()
    try:
        return float(value) if value else None
    except ValueError:
        raise pytest.UsageError(f"{DEADLINE_ENV}={value!r} is not a time in seconds since the epoch") from None


def pytest_collection_modifyitems(config, items):
    if _deadline() is None:
        return
    rank = {name: n for n, name in enumerate(EXTENDED_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file's own order is kept


def pytest_runtest_setup(item):
    import time

    deadline = _deadline()
    if deadline is not None and time.time() > deadline:
        pytest.skip(f"CI's time box ({DEADLINE_ENV}) is spent: `make test-extended` runs this test in full")


@pytest.fixture(scope="session")
def spark():
    """The one local Delta-enabled session for the whole run (JVM start is seconds; share it)."""
    from spark.session import get_spark, stop_spark

    session = get_spark(app_name="clwl-tests")
    yield session
    stop_spark()


@pytest.fixture
def tmp_lake(tmp_path: Path) -> Path:
    """An empty lake root for one test; use it as PipelineConfig(lake=tmp_lake)."""
    lake = tmp_path / "lake"
    lake.mkdir()
    return lake


class PublishedSamples:
    """The lake `clwl run` publishes from the bundled samples, every sample date (what `make demo` does), and
    what that run printed. Built once per test session and shared: consumers only read it (a test that writes
    to a lake builds its own)."""

    def __init__(self, lake: Path, landing: Path, output: str):
        self.lake, self.landing, self.output = lake, landing, output


@pytest.fixture(scope="session")
def samples_lake(request, tmp_path_factory) -> PublishedSamples:
    """The bundled samples, published once for the whole session (several test files read them; one run costs
    about a minute on 2 cores), and kept for the next session of the same code (tests/lake_cache.py: `make
    test-extended` reads the lake `make test` built; Spark starts only when the lake is built)."""
    from spark.config import REPO_ROOT
    from tests.lake_cache import kept_lake

    landing = REPO_ROOT / "samples" / "landing"

    def build(lake: Path) -> str:
        import contextlib
        import io

        from clwl.cli import main

        request.getfixturevalue("spark")  # the session's JVM, shared with the other Spark tests
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["run", "--landing", str(landing), "--lake", str(lake)])
        assert code == 0, out.getvalue()[-3000:]
        return out.getvalue()

    lake, output, _ = kept_lake(request.config, "samples", tmp_path_factory.mktemp("samples"), build)
    return PublishedSamples(lake, landing, output)


SAMPLES_DAY = "2026-11-20"


@pytest.fixture(scope="session")
def samples_day_run(request, tmp_path_factory):
    """`clwl run` (spark.pipeline.run_pipeline) of one sample date, 2026-11-20, from samples/landing into a fresh
    lake, once for the session (and kept for the next session of the same code, as ``samples_lake``):
    ``.config`` (PipelineConfig: ``.lake``, ``.landing``) and ``.outcome`` (its RunOutcome). Readers only; a test
    that writes copies the lake (and a landing of its own). Shared by tests/dags/test_dag_runs.py (what the nightly
    DAG must publish) and tests/spark/test_publish_atomic.py (run 1, published), each a run of half a minute to a
    minute on 2 cores. ``source_file`` is relative to the landing root, so a copy of samples/landing gives the
    same rows."""
    from spark.config import REPO_ROOT, PipelineConfig
    from tests.lake_cache import kept_lake

    landing = REPO_ROOT / "samples" / "landing"

    def build(lake: Path):
        import time

        from spark.pipeline import run_pipeline

        spark = request.getfixturevalue("spark")
        t0 = time.perf_counter()
        outcome = run_pipeline(PipelineConfig(lake=lake, landing=landing), [SAMPLES_DAY], spark=spark,
                               progress=lambda m: None)
        assert outcome.published and outcome.dates[0].published, outcome
        print(f"clwl run of {SAMPLES_DAY} (samples_day_run): {time.perf_counter() - t0:.1f} s {outcome.seconds}")
        return outcome

    lake, outcome, _ = kept_lake(request.config, "samples-day", tmp_path_factory.mktemp("samples-day"), build)
    return SimpleNamespace(config=PipelineConfig(lake=lake, landing=landing), outcome=outcome)


@pytest.fixture(scope="session")
def reallocation_lake(spark, tmp_path_factory):
    """The hand-made re-allocation day (tests/handmade.py ``reallocation_landing``; its outcomes are derived in
    tests/spark/test_reallocation_day.py's docstring), published once for the session by the real pipeline; the
    PipelineConfig of that run (``.lake``, ``.landing``). Readers only, except a what-if (it writes under
    ``<lake>/whatif/<name>`` and never touches the published tables: tests/spark/test_whatif_run.py checks it).

    Added to the hand-made puts: the put file says M4 arrived at QM2 (the replay agrees) and M6 at QM3 (the
    replay has QM2: a disagreement), so the observed destination and the agreement come from the real columns."""
    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline
    from tests.handmade import DAY, msg, reallocation_landing

    root = tmp_path_factory.mktemp("reallocation")
    landing = reallocation_landing(root / "landing")
    puts = landing / DAY / "QM1" / "puts.csv"
    lines = puts.read_text(encoding="utf-8").splitlines()
    # observed_qmgr, observed_channel, observed_xmitq are the last three columns, empty in the hand-made rows.
    observed = {msg(4): "QM2,TO.QM2,", msg(6): "QM3,TO.QM3,"}
    for i, line in enumerate(lines):
        for m, cols in observed.items():
            if m in line:
                assert line.endswith(",,,")
                lines[i] = line[:-2] + cols
    puts.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = PipelineConfig(lake=root / "lake", landing=landing)
    assert run_pipeline(config, [DAY], spark=spark, progress=lambda m: None).published
    return config


class RunsAtOnce:
    """Two `clwl run` child processes on one empty lake: ``first`` took the lake lock, ``second`` was started while
    the first held it (``lake_before_second``: what the lake folder held then). Each has returncode, stdout, stderr,
    pid and seconds; ``second_ended_first``: the second had exited while the first still ran."""

    def __init__(self, lake: Path, landing: Path, first: SimpleNamespace, second: SimpleNamespace,
                 second_ended_first: bool, lake_before_second: list[str]):
        self.lake, self.landing, self.first, self.second = lake, landing, first, second
        self.second_ended_first, self.lake_before_second = second_ended_first, lake_before_second


@pytest.fixture(scope="session")
def blocked_day_runs(tmp_path_factory) -> RunsAtOnce:
    """The hand-made day the quality gate blocks (tests/spark/test_blocked_run_cli.py's landing), run by two real
    `clwl run` processes on one empty lake: the second starts as soon as the first holds the lake lock, long before
    the first creates a table. test_blocked_run_cli.py checks the first's run (exit 4, nothing published),
    tests/spark/test_lake_lock.py the race (the second refused with one line naming the first): one pipeline run
    (a minute or two on 2 cores) serves both.

    The second waits for the first's name in the lock file: two processes started at the same instant can meet the
    lock between the first's flock and its writing its name, and that refusal names no holder (clwl/lake/lock.py
    _describe), which is not what the race test checks."""
    import os
    import subprocess
    import sys
    import time

    from clwl.lake.lock import read_holder
    from tests.spark.test_blocked_run_cli import DAY, blocked_landing

    base = tmp_path_factory.mktemp("blocked-day")
    landing = blocked_landing(base / "landing")
    lake = base / "lake"
    env = {k: v for k, v in os.environ.items() if k not in ("CLWL_SPARK_VERBOSE", "CLWL_LOCK_WAIT",
                                                            "CLWL_SPARK_MASTER", "CLWL_LANDING", "CLWL_LAKE")}
    cmd = [sys.executable, "-m", "clwl", "run", "--landing", str(landing), "--lake", str(lake), "--date", DAY]
    procs: dict[str, subprocess.Popen] = {}
    seconds: dict[str, float] = {}

    def start(name: str) -> subprocess.Popen:
        with open(base / f"{name}.out", "w") as out, open(base / f"{name}.err", "w") as err:
            procs[name] = subprocess.Popen(cmd, cwd=base, env=env, stdout=out, stderr=err)
        seconds[name] = time.monotonic()
        return procs[name]

    def wait(name: str, timeout: float) -> None:
        procs[name].wait(timeout=timeout)
        seconds[name] = time.monotonic() - seconds[name]

    try:
        first = start("first")
        deadline = time.monotonic() + 120  # the lock comes before Spark starts: seconds
        while read_holder(lake).get("pid") != first.pid:
            assert first.poll() is None and time.monotonic() < deadline, "the first clwl run took no lake lock"
            time.sleep(0.05)
        lake_before_second = sorted(p.name for p in lake.iterdir())
        start("second")
        wait("second", 300)
        second_ended_first = first.poll() is None
        wait("first", 900)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    runs = {name: SimpleNamespace(returncode=proc.returncode, pid=proc.pid, seconds=seconds[name],
                                  stdout=(base / f"{name}.out").read_text(), stderr=(base / f"{name}.err").read_text())
            for name, proc in procs.items()}
    print(f"clwl run (blocked day): {runs['first'].seconds:.1f} s, the second refused in {runs['second'].seconds:.1f} s")
    return RunsAtOnce(lake, landing, runs["first"], runs["second"], second_ended_first, lake_before_second)

"""Shared fixtures. Spark is imported lazily, so unit tests that need no Spark never start a JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.objectstore import object_store  # noqa: F401  (the session's S3-compatible server)


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
def samples_lake(spark, tmp_path_factory) -> PublishedSamples:
    """The bundled samples, published once for the whole session (several test files read them; one run costs
    about a minute on 2 cores)."""
    import contextlib
    import io

    from clwl.cli import main
    from spark.config import REPO_ROOT

    landing = REPO_ROOT / "samples" / "landing"
    lake = tmp_path_factory.mktemp("samples") / "lake"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["run", "--landing", str(landing), "--lake", str(lake)])
    assert code == 0, out.getvalue()[-3000:]
    return PublishedSamples(lake, landing, out.getvalue())


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

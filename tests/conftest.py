"""Shared fixtures. Spark is imported lazily, so unit tests that need no Spark never start a JVM."""

from __future__ import annotations

from pathlib import Path

import pytest


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

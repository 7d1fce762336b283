"""The trace time zone and Spark's verbosity travel in the one config object (spark.config.PipelineConfig), not
through os.environ: the command line puts --trace-tz and --verbose there, the environment is read once by
PipelineConfig.from_env, and the ingest and the session factory take them from the config."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from spark.config import PipelineConfig


@pytest.fixture
def clean_env(monkeypatch):
    for var in ("CLWL_TRACE_TZ", "CLWL_SPARK_VERBOSE", "CLWL_LAKE", "CLWL_LANDING", "CLWL_SPARK_MASTER"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_from_env_reads_the_zone_and_verbosity_once_and_arguments_win(clean_env):
    assert (PipelineConfig.from_env().trace_tz, PipelineConfig.from_env().verbose) == (None, False)
    clean_env.setenv("CLWL_TRACE_TZ", "Europe/London")
    clean_env.setenv("CLWL_SPARK_VERBOSE", "1")
    config = PipelineConfig.from_env()
    assert (config.trace_tz, config.verbose) == ("Europe/London", True)
    assert PipelineConfig.from_env(trace_tz="Asia/Tokyo").trace_tz == "Asia/Tokyo"


def test_the_command_line_leaves_the_environment_alone(clean_env, tmp_path, capsys):
    """`clwl ingest --trace-tz ZONE --verbose` used to set CLWL_TRACE_TZ and CLWL_SPARK_VERBOSE in os.environ for
    the ingest and the session factory to find; now the config carries both."""
    from clwl.cli.pipeline import _start

    args = argparse.Namespace(trace_tz="Europe/London", verbose=True)
    config = PipelineConfig.from_env(lake=tmp_path / "lake", trace_tz=args.trace_tz, verbose=args.verbose)
    before = dict(os.environ)
    problem = _start("ingest", args, ["2026-11-20"], Path("samples/landing"), config)
    assert problem is None or "java" in problem.lower()  # a machine without Java says so; nothing else fails
    assert dict(os.environ) == before
    assert (config.trace_tz, config.verbose) == ("Europe/London", True)


def test_a_bad_zone_is_one_line(clean_env, tmp_path):
    from clwl.cli.pipeline import _start

    args = argparse.Namespace(trace_tz="Mars/Olympus", verbose=False)
    config = PipelineConfig.from_env(lake=tmp_path / "lake")
    assert _start("run", args, [], Path("x"), config) == \
        "clwl run: --trace-tz Mars/Olympus: not a time zone name (e.g. UTC, Europe/London)"

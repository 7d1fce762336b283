"""Nothing changed, nothing done (issue 30 item 1): a date whose inputs are those its published run recorded is
left as it is, and each input, changed alone, makes the date run again.

The estate is the hand-made re-allocation day (tests/handmade.py), the session's published run of it
(tests/conftest.py ``reallocation_lake``) copied into a lake and landing of this module's own (the test changes
its landing). What a date's inputs are is clwl/lake/fingerprint.py's docstring: the data files of its
partitions, the configuration and status histories up to the end of the day, its quarantine and ingest-log rows,
the run's options and the code. Each step below changes one of them and checks which digest moved.
"""

from __future__ import annotations

import pytest

from tests.handmade import DAY, copy_run

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _quiet(_line: str) -> None:
    pass


@pytest.fixture(scope="module")
def published(reallocation_lake, tmp_path_factory):
    """The session's published run of the hand-made day (tests/conftest.py ``reallocation_lake``), copied: this
    module changes its landing and lake. (config, the published run's id)."""
    from clwl.lake.door import Lake
    from clwl.lake.published import read_published

    config = copy_run(reallocation_lake, tmp_path_factory.mktemp("unchanged"))
    run_id = read_published(config.lake / "gold").dates[DAY]
    (summary,) = Lake(config.lake).rows("gold.run_summary").to_pylist()
    assert (summary["run_id"], summary["status"]) == (run_id, "published")
    return config, run_id


def _gold_versions(config) -> dict:
    from clwl.lake.door import GOLD_TABLES, Lake

    lake = Lake(config.lake)
    return {t: lake.version(f"gold.{t}") for t in GOLD_TABLES}


def _changed(config, profile: str = "default", whatif=None) -> list[str]:
    """The digests of DAY that differ from what its published run recorded."""
    from clwl.lake.fingerprint import changed
    from spark.pipeline import date_before_run
    from spark.run import PipelineRun

    run = PipelineRun(config, "probe", profile, whatif)
    pub = run.out_lake.published()
    return changed(date_before_run(run, DAY).inputs, pub.inputs.get(DAY))


def test_nothing_changed_nothing_runs(published, spark, capsys):
    """A second `clwl run` of the same landing: nothing to ingest, every digest equal, so the date is reported
    unchanged since the first run, without Spark, and no gold table gains a version. --force runs it."""
    from clwl.cli import main
    from clwl.lake.published import read_published
    from spark.pipeline import unchanged_run

    config, first = published
    before = _gold_versions(config)
    assert _changed(config) == []
    outcome = unchanged_run(config, [DAY])
    assert outcome is not None and outcome.dates[0].unchanged_since == first
    assert outcome.dates[0].messages == 6  # the published run's count, from gold.run_summary
    code = main(["run", "--landing", str(config.landing), "--lake", str(config.lake), "--date", DAY])
    out = capsys.readouterr().out
    assert code == 0 and f"{DAY}: unchanged since {first}, published as is" in out, out
    assert "starting Spark" not in out and "[1/" not in out  # no stage ran
    assert _gold_versions(config) == before
    assert read_published(config.lake / "gold").dates[DAY] == first


def test_each_option_is_an_input(published):
    """Another algorithm profile, or a what-if, is another result: the options digest differs (a what-if's own
    lake has no publish of the date yet, so everything is new there)."""
    from clwl.analyses.whatif import WhatIf

    config, _ = published
    assert _changed(config, profile="legacy") == ["options"]
    whatif = WhatIf.from_dict({"name": "qm3-up", "channel_state": {"TO.QM3": "RUNNING"}})
    assert _changed(config, whatif=whatif) == ["(no inputs recorded with the published run)"]


def test_a_changed_put_file_then_a_changed_capture_run_the_date_again(published, spark):
    """One more put row in QM1's puts.csv: before the ingest, `clwl run` has work (a changed file); after the
    ingest alone, the date's silver.message_events files and its ingest-log row differ (bronze.put_records stores
    only held-back rows, and none is held back here),
    so the run replays the date and publishes a new run. Then a capture's CLWLWGHT: silver.config_history
    differs. Finally --force runs a date that is unchanged."""
    from clwl.lake.published import read_published
    from spark.ingest import ingest
    from spark.pipeline import run_pipeline, unchanged_run

    config, first = published
    puts = config.landing / DAY / "QM1" / "puts.csv"
    lines = puts.read_text(encoding="utf-8").splitlines()
    last = lines[-1]
    # a seventh message: the last row again with another message id (its last hex digit changed)
    msg_id = next(c for c in last.split(",") if len(c) == 48)
    extra = last.replace(msg_id, msg_id[:-1] + ("0" if msg_id[-1] != "0" else "1"))
    puts.write_text("\n".join([*lines, extra]) + "\n", encoding="utf-8")
    assert unchanged_run(config, [DAY]) is None  # a changed file: the ingest has work

    ingest(config, [DAY], spark=spark, progress=_quiet)
    moved = _changed(config)
    assert {"silver.message_events", "silver.ingest_files"} <= set(moved), moved
    assert "bronze.put_records" not in moved, moved  # each put row stored once: in silver
    assert "silver.config_history" not in moved and "code" not in moved and "options" not in moved
    outcome = run_pipeline(config, [DAY], spark=spark, progress=_quiet)
    assert outcome.published and outcome.dates[0].messages == 7 and not outcome.dates[0].unchanged_since
    second = read_published(config.lake / "gold").dates[DAY]
    assert second != first and _changed(config) == []

    capture = next(p for p in sorted((config.landing / DAY / "QM1").iterdir()) if "CLWLWGHT(50)" in p.read_text())
    capture.write_text(capture.read_text().replace("CLWLWGHT(50)", "CLWLWGHT(60)", 1), encoding="utf-8")
    ingest(config, [DAY], spark=spark, progress=_quiet)
    assert "silver.config_history" in _changed(config)

    run_pipeline(config, [DAY], spark=spark, progress=_quiet)
    third = read_published(config.lake / "gold").dates[DAY]
    assert third != second and _changed(config) == []
    facts = _trend_facts(config)
    forced = run_pipeline(config, [DAY], spark=spark, progress=_quiet, force=True)
    assert forced.published and not forced.dates[0].unchanged_since
    assert read_published(config.lake / "gold").dates[DAY] == forced.run_id
    # A re-run of the day replaces its trend facts (gold.trend_facts), never adds a second copy of them.
    again = _trend_facts(config)
    assert again == facts and len(again) == len(set(again)), (len(facts), len(again))
    assert ("stuck", None, "QM1", "TO.QM2") in {k[:4] for k in again}  # a channel of the day, counted even at 0


def _trend_facts(config) -> list[tuple]:
    """DAY's published gold.trend_facts rows as (metric, qmgr, sending_qmgr, channel, queue, facet, value)."""
    from clwl.lake.door import Lake

    lake = Lake(config.lake)
    rows = lake.rows("gold.trend_facts", ["metric", "qmgr", "sending_qmgr", "channel", "queue", "facet", "value"],
                     filters=[("run_date", "=", _day())], version=lake.published().version("trend_facts"))
    return sorted(tuple(r.values()) for r in rows.to_pylist())


def _day():
    import datetime as dt

    return dt.date.fromisoformat(DAY)

"""Gold tables that refuse a wrong row (issue 43 item 3): the registry's CHECK constraints (clwl/lake/registry.py
``checks``) are on every gold table from its first commit, a lake made by an earlier version gains them at the next
run, and a row that breaks one fails its write with Delta's own error while readers keep the published state.

The wrong rows here reach the write past a quality gate that passes everything (``passing_gate``): the suites check
the same and more, so in a real run the gate blocks such a row first, with its reasons; the constraints are what
refuses one that gets past it (a suite changed, a bug, another writer). The lakes are hand-made and small; the
samples' published gold is only read (a copy is made where something is written).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clwl.lake.door import GOLD_TABLES, Lake, open_delta, unsettled
from clwl.lake.published import read_published
from clwl.lake.registry import SPECS, constraints_in, same_expression
from spark.config import PipelineConfig

pytestmark = pytest.mark.spark

DAY, NEXT = dt.date(2026, 11, 20), dt.date(2026, 11, 21)
UTC = dt.timezone.utc
DOCS = Path(__file__).resolve().parents[2] / "docs" / "tables.md"


def _at(day: dt.date, hh: int) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, hh, tzinfo=UTC)


def _distribution(spark, day: dt.date, p_value: float = 0.5, observed: int = 3):
    from spark.tables import TABLES

    t = TABLES["gold.distribution"]
    rows = [t.row(run_date=day, sending_qmgr="*", queue="APP.ORDERS", interval_start=_at(day, h),
                  interval_end=_at(day, h + 1), qmgr=q, expected=3, observed=observed if q == "QM2" else 3,
                  deviation=float((observed if q == "QM2" else 3) - 3), p_value=p_value if q == "QM2" else 0.5,
                  verdict="expected", explanation="CLWLWGHT(50)", source="accounting", channel=None)
            for h in (10, 11) for q in ("QM1", "QM2")]
    return spark.createDataFrame(rows, t.schema)


def _stuck(spark, day: dt.date, released_hour: int | None = None):
    from spark.tables import TABLES

    t = TABLES["gold.stuck_messages"]
    held, released = _at(day, 10), _at(day, released_hour) if released_hour is not None else None
    rows = [t.row(run_date=day, sending_qmgr="QM1", msg_id=f"414D5120514D31{n:034X}", queue="APP.ORDERS",
                  qmgr="QM3", channel="TO.QM3", xmitq="SYSTEM.CLUSTER.TRANSMIT.QUEUE", channel_state="STOPPED",
                  held_from=held, released_at=released, age_seconds=3600, why="still-most-favourable",
                  detail="QM3 keeps the highest CLWLRANK", observed_on_xmitq=False, observed_left_at=None,
                  timing_source="channel status", seen_at=None) for n in (1, 2)]
    return spark.createDataFrame(rows, t.schema)


def _summary(spark, day: dt.date, run_id: str, stuck: int = 2):
    from spark.tables import TABLES

    t = TABLES["gold.run_summary"]
    return spark.createDataFrame([t.row(
        run_id=run_id, run_date=day, started_at=_at(day, 23), finished_at=_at(day, 23), rows_read=10,
        rows_accepted=10, rows_quarantined=0, messages_replayed=8, messages_stuck=stuck, distribution_unexpected=0,
        traced=0, agreed=0, disagreed=0, timing_observed=0, timing_agreed=0, timing_disagreed=0,
        table_versions={}, status="published", validation_result=None, warnings=None)], t.schema)


@pytest.fixture
def passing_gate(monkeypatch):
    """Every suite passes: what the constraints refuse is what got past the gate."""
    from spark import publish as pub
    from spark.quality import ValidationOutcome

    monkeypatch.setattr(pub, "validate_table",
                        lambda df, suite, checks=(), *, cache=True: ValidationOutcome(suite, True, [], {}))


def _publish(spark, cfg, day, run_id, frames, **kw):
    from spark.publish import PublishRequest, publish

    return publish(spark, Lake(cfg.lake), day, run_id,
                   PublishRequest(frames, cross_checks=False, validate_silver=False, **kw))


def _same(have: dict[str, str], want: dict[str, str]) -> bool:
    """The same constraints (Spark keeps an added one's text re-spaced)."""
    return have.keys() == want.keys() and all(same_expression(have[n], want[n]) for n in have)


def _pointer(cfg) -> bytes:
    return (Path(cfg.lake) / "gold" / "_published.json").read_bytes()


def _published_rows(cfg, sql: str) -> list[dict]:
    """What `clwl query` answers: the gold tables at the versions the pointer names."""
    from clwl.lake.query import run_query

    return run_query(sql, Path(cfg.lake)).to_pylist()


def test_a_wrong_row_fails_its_write_with_deltas_error_and_readers_keep_the_published_day(spark, tmp_path,
                                                                                         passing_gate):
    from spark.publish import PublishError, write_run_date

    cfg = PipelineConfig(lake=tmp_path / "lake")
    first = _publish(spark, cfg, DAY, "run-1", {"distribution": _distribution(spark, DAY),
                                                 "stuck_messages": _stuck(spark, DAY, released_hour=11),
                                                 "run_summary": _summary(spark, DAY, "run-1")})
    assert first.published
    lake = Lake(cfg.lake)
    for name in ("distribution", "stuck_messages", "run_summary"):  # created with them: version 0, then the rows
        have = constraints_in(open_delta(lake.table(f"gold.{name}")).metadata().configuration)
        assert have == SPECS[f"gold.{name}"].constraints, name
    pointer = _pointer(cfg)
    before = _published_rows(cfg, "SELECT qmgr, observed, p_value FROM distribution ORDER BY interval_start, qmgr")

    # A share outside [0, 1] in one table, a release before its hold in another: the publish fails on Delta's
    # own refusal, puts back what it wrote, and never moves the pointer.
    with pytest.raises(PublishError) as refused:
        _publish(spark, cfg, DAY, "run-2", {"distribution": _distribution(spark, DAY, p_value=1.5, observed=9),
                                             "stuck_messages": _stuck(spark, DAY, released_hour=11),
                                             "run_summary": _summary(spark, DAY, "run-2")})
    said = str(refused.value)
    assert "writing gold.distribution failed" in said
    assert "[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint p_value_within_0_and_1" in said
    assert "- p_value : 1.5" in said  # the refused row's value, as Delta names it
    assert "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES" in str(refused.value.__cause__)  # Delta's own error, chained
    assert _pointer(cfg) == pointer  # byte for byte: the published state is the first run's
    after = _published_rows(cfg, "SELECT qmgr, observed, p_value FROM distribution ORDER BY interval_start, qmgr")
    assert after == before and all(r["p_value"] == 0.5 for r in after)

    # The next publish first rolls back what the failed one put back (settle_gold: the pointer then names the
    # same rows at a new version); its own wrong row is refused in turn.
    with pytest.raises(PublishError, match=r"gold.stuck_messages failed .*CHECK constraint release_not_before_hold"):
        _publish(spark, cfg, DAY, "run-3", {"stuck_messages": _stuck(spark, DAY, released_hour=9)})
    assert read_published(lake.layer("gold")).dates == {DAY.isoformat(): "run-1"}
    assert {r["released_at"] for r in _published_rows(cfg, "SELECT released_at FROM stuck_messages")} == {
        _at(DAY, 11)}
    assert _published_rows(cfg, "SELECT qmgr, observed, p_value FROM distribution "
                                "ORDER BY interval_start, qmgr") == before
    assert {r["run_id"] for r in _published_rows(cfg, "SELECT run_id FROM run_summary")} == {"run-1"}

    # Another writer than the publish: the same refusal, and no commit at all.
    from pyspark.sql import functions as F

    version = lake.version("gold.run_summary")
    with pytest.raises(Exception, match=r"CHECK constraint counts_not_negative"):
        bad = _summary(spark, NEXT, "rogue").withColumn("rows_read", F.lit(-1).cast("long"))
        write_run_date(bad, str(lake.table("gold.run_summary")), NEXT)
    assert lake.version("gold.run_summary") == version


def test_staged_files_become_gold_as_they_are_only_when_their_rows_keep_the_constraints(spark, tmp_path,
                                                                                         passing_gate):
    """Gold takes a staged table's files by one commit (spark/delta_commits.py) without Spark writing the rows,
    so without Delta checking them: publish first counts the staged rows that break a constraint of the gold
    table. None: the files are committed, constraints and all. One: Spark writes the rows, and Delta refuses."""
    from spark.publish import PublishError, write_run_date
    from spark.tables import TABLES, create_empty

    cfg = PipelineConfig(lake=tmp_path / "lake")
    lake = Lake(cfg.lake)
    staging = str(lake.table("staging.stuck_messages"))
    create_empty(TABLES["gold.stuck_messages"], staging, staged=True)
    assert constraints_in(open_delta(staging).metadata().configuration) == {}  # the gate reports, staging takes it

    def stage(df) -> tuple[str, int]:
        write_run_date(df, staging, DAY)
        return staging, lake.version("staging.stuck_messages")

    good = stage(_stuck(spark, DAY, released_hour=11))
    assert _publish(spark, cfg, DAY, "run-1", {"stuck_messages": _stuck(spark, DAY, released_hour=11)},
                    staged={"stuck_messages": good}).published
    gold = lake.table("gold.stuck_messages")
    last = open_delta(gold).history(1)[0]
    assert "the files of" in last.get("engineInfo", ""), last  # the staged files themselves
    assert constraints_in(open_delta(gold).metadata().configuration) == SPECS["gold.stuck_messages"].constraints
    pointer = _pointer(cfg)

    bad = stage(_stuck(spark, DAY, released_hour=9))  # released at 09:00, held from 10:00
    with pytest.raises(PublishError, match=r"CHECK constraint release_not_before_hold"):
        _publish(spark, cfg, DAY, "run-2", {"stuck_messages": _stuck(spark, DAY, released_hour=9)},
                 staged={"stuck_messages": bad})
    assert _pointer(cfg) == pointer
    assert {r["released_at"] for r in _published_rows(cfg, "SELECT released_at FROM stuck_messages")} == {
        _at(DAY, 11)}


def test_a_lake_made_before_the_constraints_gains_them_and_the_change_data_feed_at_the_next_run(
        spark, tmp_path, passing_gate, caplog):
    """Gold and silver tables created as an earlier version did (Spark's first write: no constraints, no change
    data feed): the next publish adds each constraint (ALTER TABLE ADD CONSTRAINT, detected by the table's
    `delta.constraints.<name>` properties) and the feed, and the pointer names those commits (the same rows), so
    nothing looks unsettled; the next ingest turns the feed on for the silver history. A constraint the old rows
    break is left off, said, and tried again by the run after."""
    from spark.publish import ensure_gold, write_run_date
    from spark.tables import TABLES, ensure_table

    cfg = PipelineConfig(lake=tmp_path / "lake")
    lake = Lake(cfg.lake)
    # The earlier version's first publish: Spark's own first writes, then the pointer.
    write_run_date(_distribution(spark, DAY), str(lake.table("gold.distribution")), DAY)
    write_run_date(_summary(spark, DAY, "run-old"), str(lake.table("gold.run_summary")), DAY)
    old_stuck = _stuck(spark, DAY, released_hour=9)  # a row an earlier version published, wrong by today's rules
    write_run_date(old_stuck, str(lake.table("gold.stuck_messages")), DAY)
    from clwl.lake.published import write_published

    write_published(lake.layer("gold"), {n: 0 for n in ("distribution", "run_summary", "stuck_messages")},
                    {DAY.isoformat(): "run-old"}, run_id="run-old", run_date=DAY.isoformat())
    history = str(lake.table("silver.config_history"))
    spark.createDataFrame([], TABLES["silver.config_history"].schema).write.format("delta").save(history)
    for name in ("distribution", "run_summary", "stuck_messages"):
        assert constraints_in(open_delta(lake.table(f"gold.{name}")).metadata().configuration) == {}
    assert "delta.enableChangeDataFeed" not in (open_delta(history).metadata().configuration or {})

    with caplog.at_level(logging.WARNING):
        assert _publish(spark, cfg, NEXT, "run-new", {"distribution": _distribution(spark, NEXT),
                                                       "run_summary": _summary(spark, NEXT, "run-new")}).published
    for name in ("distribution", "run_summary"):
        config = open_delta(lake.table(f"gold.{name}")).metadata().configuration
        assert _same(constraints_in(config), SPECS[f"gold.{name}"].constraints), name
    assert open_delta(lake.table("gold.run_summary")).metadata().configuration["delta.enableChangeDataFeed"] == "true"
    stuck = constraints_in(open_delta(lake.table("gold.stuck_messages")).metadata().configuration)
    assert set(stuck) == set(SPECS["gold.stuck_messages"].constraints) - {"release_not_before_hold"}
    assert any("release_not_before_hold" in r.getMessage() and "not added" in r.getMessage() for r in caplog.records)
    pub = read_published(lake.layer("gold"))
    assert unsettled(lake.layer("gold")) == []  # latest = published for every table
    assert pub.tables["stuck_messages"] == lake.version("gold.stuck_messages") > 0
    assert pub.dates == {DAY.isoformat(): "run-old", NEXT.isoformat(): "run-new"}
    assert len(_published_rows(cfg, "SELECT * FROM stuck_messages")) == 2  # the old rows, as they were
    pointer = _pointer(cfg)
    assert ensure_gold(spark, Lake(cfg.lake)) == {}  # tried again, refused again: nothing to do, no commit
    assert _pointer(cfg) == pointer

    ensure_table(spark, cfg, "silver.config_history")  # what the next ingest does first (ensure_tables)
    assert open_delta(history).metadata().configuration["delta.enableChangeDataFeed"] == "true"
    version = lake.version("silver.config_history")
    ensure_table(spark, cfg, "silver.config_history")
    assert lake.version("silver.config_history") == version  # nothing more to do: no commit


def _violations(spark, location: str, version: int, expr: str) -> int:
    reader = spark.read.format("delta").option("versionAsOf", version)
    return reader.load(location).where(f"NOT coalesce(({expr}), false)").count()


def test_the_samples_gold_keeps_every_constraint_and_the_slow_tables_keep_a_change_feed(spark, samples_lake):
    """The published samples (every date) satisfy every constraint, each counted at the published version, and
    carry them; staging carries none (the gate reports a wrong staged row); the configuration history, the
    channel status timeline and run_summary record their changes."""
    lake = Lake(samples_lake.lake)
    pub = read_published(lake.layer("gold"))
    for name in GOLD_TABLES:
        key = f"gold.{name}"
        location = str(lake.table(key))
        assert _same(constraints_in(open_delta(location).metadata().configuration), SPECS[key].constraints), key
        for constraint, expr in SPECS[key].constraints.items():
            assert _violations(spark, location, pub.tables[name], expr) == 0, (key, constraint)
        assert constraints_in(open_delta(lake.table(f"staging.{name}")).metadata().configuration) == {}
    feeds = {k for k in SPECS if lake.exists(k) and (open_delta(lake.table(k)).metadata().configuration or {}).get(
        "delta.enableChangeDataFeed") == "true"}
    assert feeds == {k for k, s in SPECS.items() if s.change_data_feed}
    assert feeds >= {"silver.config_history", "silver.channel_status", "gold.run_summary"}


def _docs_example() -> str:
    """The Python example of docs/tables.md's "What changed between two versions"."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## What changed between two versions"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_documented_change_feed_example_names_what_a_new_capture_changed(spark, samples_lake, tmp_path):
    """A copy of the published samples; one more QM1 configuration capture (20:00) that lowers QM2's CLWLWGHT;
    `clwl ingest`. The example of docs/tables.md, run as a script between the history's versions before and
    after, prints the version the capture closed and the one it opened, and nothing of the rest of QM1's
    history (which the rebuild wrote again unchanged)."""
    from spark.ingest import ingest

    lake, landing = tmp_path / "lake", tmp_path / "landing"
    shutil.copytree(samples_lake.lake, lake)
    shutil.copytree(samples_lake.landing, landing)
    capture = landing / DAY.isoformat() / "QM1" / "config_180000.mqsc"
    text = capture.read_text(encoding="utf-8")
    start = text.index("CLUSQMGR(QM2)")
    changed = text[:start] + text[start:].replace("CLWLWGHT(80)", "CLWLWGHT(30)", 1)
    assert changed != text
    (capture.parent / "config_200000.mqsc").write_text(changed, encoding="utf-8")
    cfg = PipelineConfig(lake=lake, landing=landing)
    before = Lake(lake).version("silver.config_history")
    ingest(cfg, [DAY.isoformat()], spark=spark)
    after = Lake(lake).version("silver.config_history")
    assert after > before

    script = tmp_path / "config_changes.py"
    script.write_text(_docs_example(), encoding="utf-8")
    out = subprocess.run([sys.executable, str(script), str(lake), str(before), str(after)], capture_output=True,
                         text=True, timeout=300, check=True).stdout
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 3, out
    assert all(" QM1 CLUSQMGR " in line and "QM2" in line for line in lines), out
    closed = [line for line in lines if line.startswith("-")]
    opened = [line for line in lines if line.startswith("+")]
    assert len(closed) == 1 and "until now" in closed[0], out  # the version that was current
    assert len(opened) == 2 and sum("until 2026-11-20 20:00:00" in line for line in opened) == 1, out
    assert sum("from 2026-11-20 20:00:00" in line and "until now" in line for line in opened) == 1, out

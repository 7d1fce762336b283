"""Write-audit-publish for the gold tables.

`publish` validates every table first (its suite in expectations/, the silver suites of the tables that feed it,
and the cross-table checks of spark/cross_checks.py). Only when everything passes does it write: each table to
`<lake>/gold/<table>`, replacing only the run date's partition (Delta `replaceWhere`), in the order of
`clwl.lake.door.GOLD_TABLES` (run_summary last, with the versions of the others in `table_versions`). A table whose
frame is a staged table's rows as they are (`staged`) is published by committing those Parquet files to gold
(spark/delta_commits.py) instead of writing its rows again. When anything fails it writes nothing to gold, so
readers keep the last good published version.

Gold refuses a wrong row by itself too: every gold table carries the registry's CHECK constraints
(clwl/lake/registry.py ``checks``), from its first commit (a first publish creates it empty with them), and a
table made by an earlier version gains them before the publish writes (`ensure_gold`). A write of a row that
breaks one fails with Delta's own error (then PublishError, below). Staged files are committed to gold as they
are only when no staged row breaks a constraint of the gold table (a count over the columns they name); else
Spark writes the rows, and Delta checks them.

The validation results are always kept, at `<lake>/validation/<run_id>/<table>.json` (silver suites as
`silver.<table>.json`, the verdict and versions in `_publish.json`; a second run date published under the same
run id goes to `<run_id>/<run_date>/`); a blocked run's reader finds the failed expectations there.

If a write fails after validation passed, the run date's partition of the tables this publish already wrote is
rewritten as it was in their previous version, and PublishError is raised: gold never mixes two runs.

All or nothing, also when the process is killed: readers take each gold table at the version named in
`<lake>/gold/_published.json` (clwl/lake/published.py), which a publish replaces in one atomic step after its last
gold commit. A commit after the pointer's version belongs to a publish that did not finish; the next publish
first restores such a table to the pointer's version (`settle_gold`), so those rows never reach a later
version; every command that writes the lake does the same first (`settle_before_writing`), so a plain Delta
reader of the latest versions sees a killed publish only until the next write. The whole publish holds the lake
lock (clwl/lake/lock.py).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import json
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection, Mapping, Sequence

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from clwl.days import RunDate
from clwl.lake.door import GOLD_TABLES, VALIDATION, Lake, gold_tables, is_delta_table, latest_version, unsettled
from clwl.lake.lock import lake_lock
from clwl.lake.published import read_published, write_published
from clwl.lake.storage import delete_object, delete_prefix, put_object, read_object, store_for
from spark.cross_checks import default_cross_checks, events_for_run_date, silver_tables
from spark.delta_commits import replace_partition_with_files
from spark.quality import ExtraCheck, ValidationOutcome, forget_frames, validate_table
from spark.replay import ROUTING_REPLAY_OPTIONS
from spark.tables import TABLES, create_empty, ensure_properties, on_date, read_table

log = logging.getLogger(__name__)


@dataclass
class PublishOutcome:
    published: bool
    failures: list[str]  # "<table>: <expectation type> <column>: <reason>"
    result_path: Path  # <lake>/validation/<run_id>
    table_versions: dict[str, int] = field(default_factory=dict)  # "gold.<table>" -> Delta version written
    previous_versions: dict[str, int | None] = field(default_factory=dict)  # before this publish (None: no table)
    outcomes: list[ValidationOutcome] = field(default_factory=list, repr=False)
    seconds: dict[str, float] = field(default_factory=dict)  # "validate" and "write" wall times


class PublishError(RuntimeError):
    """Writing failed after validation passed; the tables already written were put back."""


@dataclass(frozen=True)
class PublishRequest:
    """What one publish of a run date writes and how it is checked, besides the lake, the date and the run id.

    tables: the gold tables to publish, by bare name.
    extra_checks: more checks per gold table name, run on top of the default cross-table checks
    (``cross_checks=False`` leaves those out).
    silver: silver tables to reconcile with and validate, by bare name; those not given are read from
    ``<lake>/silver/<table>`` when they exist (message_events narrowed to the run date). A what-if run, whose
    lake has no silver, passes them here.
    validate_silver: also run the silver suites (message_events, quarantine, config_history) on those tables;
    a failing silver suite blocks too.
    uncached: tables (bare gold names, or ``silver.message_events``) not to persist for validation and writing.
    By default every frame is persisted, so that what is written is what was validated. A caller whose large
    frames are reads of Delta tables pinned to a version (publish_stage) names them here: each check then reads
    only its columns from Parquet, which is cheaper than first building an in-memory copy of every column (at
    1M messages: 12.6 s to cache routing_replay, then 6 s for its suite).
    staged: tables (bare gold names) whose frame is exactly the run date's rows of a Delta table at a version,
    as ``{name: (path, version)}`` (publish_stage's pinned staging tables): gold takes that table's files of the
    run date in one commit, without rewriting their rows (spark/delta_commits.py), where the two tables allow
    it; otherwise, and for the others, the rows are written.
    made_from: what the date was made from (clwl.lake.fingerprint.date_inputs), recorded with the publish so that
    a run with the same inputs leaves the date as it is.
    """

    tables: Mapping[str, DataFrame]
    extra_checks: Mapping[str, ExtraCheck | Sequence[ExtraCheck]] = field(default_factory=dict)
    silver: Mapping[str, DataFrame] = field(default_factory=dict)
    cross_checks: bool = True
    validate_silver: bool = True
    uncached: Collection[str] = ()
    staged: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    made_from: Mapping[str, str] | None = None

    def checks(self) -> dict[str, list[ExtraCheck]]:
        """The extra checks as lists, each under a gold table (ValueError for another name)."""
        more: dict[str, list[ExtraCheck]] = {}
        for key, value in self.extra_checks.items():
            if key not in GOLD_TABLES:
                raise ValueError(f"extra_checks[{key!r}]: not a gold table")
            more[key] = [value] if isinstance(value, ExtraCheck) else list(value)
        return more


def publish(spark: SparkSession, lake: Lake, run_date: dt.date | str, run_id: str,
            request: PublishRequest) -> PublishOutcome:
    """Validate all of ``request.tables`` (bare gold names), then publish them all to ``lake`` or none."""
    day = RunDate(run_date).day
    tables = request.tables
    if not tables:
        raise ValueError("nothing to publish: no tables given")
    unknown = [t for t in tables if t not in GOLD_TABLES]
    if unknown:
        raise ValueError(f"not gold tables: {unknown} (known: {', '.join(GOLD_TABLES)})")
    if not run_id or "/" in run_id or run_id in (".", ".."):
        raise ValueError(f"bad run_id {run_id!r}")
    more_checks = request.checks()
    result_dir = _result_dir(lake, run_id, day)
    order = [t for t in GOLD_TABLES if t in tables]
    given_silver = dict(request.silver)
    uncached = request.uncached

    # The frames are computed once (the replay behind them is the expensive part), validated, then written.
    started = time.perf_counter()
    lock = contextlib.ExitStack()  # one writer per lake (re-entrant: run_pipeline already holds it)
    lock.enter_context(lake_lock(lake.root, purpose=f"publish {run_id} {day.isoformat()}"))
    cached: dict[str, DataFrame] = {}
    forget_frames()
    try:
        settle_gold(spark, lake)
        ensure_gold(spark, lake)
        cached = {name: df if name in uncached else _persist(df) for name, df in tables.items()}
        inputs = (silver_tables(spark, lake, day, skip=given_silver)
                  if (request.validate_silver or request.cross_checks) else {})
        inputs.update(given_silver)
        if "message_events" in inputs:
            inputs["message_events"] = events_for_run_date(inputs["message_events"], day)
        checks: dict[str, list[ExtraCheck]] = (
            default_cross_checks(spark, lake, day, run_id, cached, inputs) if request.cross_checks else {}
        )
        for name, more in more_checks.items():
            checks.setdefault(name, []).extend(more)

        outcomes: list[ValidationOutcome] = []
        for name in order:
            outcomes.append(validate_table(cached[name], f"gold.{name}", checks.get(name, ()), cache=False))
        if request.validate_silver:
            for name, df in sorted(inputs.items()):
                outcomes.append(validate_table(df, f"silver.{name}", cache=f"silver.{name}" not in uncached))
        for o in outcomes:
            _write_result(o, result_dir)

        previous = {f"gold.{n}": lake.version(f"gold.{n}") for n in order}
        failures = [f"{o.table}: {f}" for o in outcomes if not o.success for f in o.failed]
        seconds = {"validate": time.perf_counter() - started}
        if failures:
            _write_summary(result_dir, run_id, day, False, failures, {}, previous)
            log.error("publish %s: blocked by %d failed check(s); gold keeps its last good version; see %s",
                      run_id, len(failures), result_dir)
            return PublishOutcome(False, failures, result_dir, {}, previous, outcomes, seconds)

        started = time.perf_counter()
        versions = _write_all(spark, lake, day, cached, previous, request.staged)
        _commit_published(lake, day, run_id, versions, request.made_from)  # the commit point: readers now see this run
        _write_summary(result_dir, run_id, day, True, [], versions, previous)
        seconds["write"] = time.perf_counter() - started
        return PublishOutcome(True, [], result_dir, versions, previous, outcomes, seconds)
    finally:
        forget_frames()
        try:
            for name, df in cached.items():
                if df is not tables[name]:
                    df.unpersist()
        finally:
            lock.close()


def _result_dir(lake: Lake, run_id: str, day: dt.date) -> Path:
    """`<lake>/validation/<run_id>`; when a run publishes several dates under one run id, the results of a date
    other than the one already there go to `<lake>/validation/<run_id>/<run_date>` (never overwritten)."""
    folder = lake.layer(VALIDATION) / run_id
    try:  # bounded: never a FIFO's hang; a local file or an object alike
        there = json.loads(read_object(folder / "_publish.json").data).get("run_date")
    except (OSError, ValueError, AttributeError):
        there = None
    return folder / day.isoformat() if there and there != day.isoformat() else folder


def settle_gold(spark: SparkSession, lake: Lake) -> dict[str, str]:
    """Make every gold table's latest version its published one, before a publish writes (under the lake lock).

    A commit after the version `gold/_published.json` names was left by a publish that did not finish (killed,
    or its put-back failed): the table is restored to the published version (Delta RESTORE, a new commit with the
    published files), so the next publish of another run date does not carry those rows into a version it
    publishes. A table folder the pointer does not name at all was created by a first publish that did not
    finish: it is removed. A lake without the pointer (from before it existed) gets one naming every gold table
    at its latest version. The pointer then names the RESTORE commits (the published files, at a new version), so
    a table's latest version is its published one again (clwl.lake.door.unsettled is empty). Returns what was done
    per table ("restored from 7 to 5", "removed")."""
    gold = lake.layer("gold")
    pub = read_published(gold)
    found = {p.name: str(p) for p in gold_tables(gold)}
    for tmp in store_for(gold).temporaries(gold):  # a killed pointer write
        delete_object(tmp)
    if not pub.exists:
        write_published(gold, {n: v for n, p in found.items() if (v := latest_version(p)) is not None})
        return {}
    done: dict[str, str] = {}
    restored: dict[str, int | None] = {}
    for name, path in found.items():
        want = pub.tables.get(name)
        latest = latest_version(path)
        if want is None:
            log.warning("publish: gold.%s is not in %s (a first publish of it did not finish): removing it",
                        name, gold / "_published.json")
            delete_prefix(gold / name)
            done[name] = "removed"
        elif latest is not None and latest > want:
            log.warning("publish: gold.%s has versions after its published version %d (up to %d, from a publish "
                        "that did not finish): restoring version %d", name, want, latest, want)
            # SQL, not delta.tables.DeltaTable: the same statement runs in a classic and a Spark Connect session
            spark.sql(f"RESTORE TABLE delta.`{path}` TO VERSION AS OF {int(want)}")
            done[name] = f"restored from {latest} to {want}"
            restored[name] = latest_version(path)
        elif latest is not None and latest < want:
            log.error("publish: gold.%s is at version %d, behind its published version %d in %s; was the table "
                      "replaced?", name, latest, want, gold / "_published.json")
    if restored:  # the RESTORE commit holds the published files: the pointer names it, so latest = published again
        write_published(gold, {**pub.tables, **{n: v for n, v in restored.items() if v is not None}}, pub.dates,
                        run_id=pub.raw.get("run_id"), run_date=pub.raw.get("run_date"), inputs=pub.inputs)
    return done


def ensure_gold(spark: SparkSession, lake: Lake) -> dict[str, list[str]]:
    """Give every existing gold table the registry's CHECK constraints and change data feed it lacks (a lake
    made by an earlier version; spark.tables.ensure_properties), under the lake lock after :func:`settle_gold`.
    Each ALTER TABLE is a commit with the same rows, so the pointer then names those commits: the table's latest
    version is its published one again, the rows readers see unchanged. A table created from now on has them
    from its first commit (:func:`_write_all`). What was done per table."""
    gold = lake.layer("gold")
    done: dict[str, list[str]] = {}
    for name in GOLD_TABLES:
        location = gold / name
        if is_delta_table(location):
            did = ensure_properties(spark, TABLES[f"gold.{name}"], str(location))
            if did:
                done[name] = did
    if not done:
        return done
    pub = read_published(gold)
    moved = {n: v for n in done if n in pub.tables and (v := latest_version(gold / n)) is not None}
    if moved:
        write_published(gold, {**pub.tables, **moved}, pub.dates, run_id=pub.raw.get("run_id"),
                        run_date=pub.raw.get("run_date"), inputs=pub.inputs, expect=pub)
    for name, what in done.items():
        log.warning("publish: gold.%s gained %s (a lake made by an earlier version)", name, ", ".join(what))
    return done


def settle_before_writing(lake: Lake, session: Callable[[], SparkSession],
                          progress: Callable[[str], object] = log.info) -> dict[str, str]:
    """At the start of every command that writes the lake (``clwl run``, ``clwl ingest``, a DAG task), under the
    lake lock: roll back what a killed publish left (:func:`settle_gold`), so that a reader of the latest versions
    stops seeing it at the next write. The check is a listing (clwl.lake.door.unsettled); Spark (``session()``) is
    asked for only when something is left."""
    left = unsettled(lake.layer("gold"))
    if not left:
        return {}
    progress(f"gold: a publish did not finish ({'; '.join(left)}): rolling it back to the published versions")
    done = settle_gold(session(), lake)
    for name, what in done.items():
        progress(f"  gold.{name}: {what}")
    return done


def _commit_published(lake: Lake, day: dt.date, run_id: str, versions: Mapping[str, int],
                      inputs: Mapping[str, str] | None = None) -> None:
    """Name the versions just written in `gold/_published.json` (one atomic replace): the publish's commit point,
    with what the date was made from (clwl/lake/fingerprint.py; none given: the date's earlier record is dropped, so
    the next run does it again)."""
    gold = lake.layer("gold")
    pub = read_published(gold)
    tables = {**pub.tables, **{k.removeprefix("gold."): int(v) for k, v in versions.items()}}
    recorded = {d: v for d, v in pub.inputs.items() if d != day.isoformat()}
    if inputs:
        recorded[day.isoformat()] = dict(inputs)
    # On an object store: replaces exactly the pointer read here (a conditional put), or refuses in one line.
    write_published(gold, tables, {**pub.dates, day.isoformat(): run_id}, run_id=run_id, run_date=day.isoformat(),
                    inputs=recorded, expect=pub)


# Test-only fault injection (tests/spark/test_publish_atomic.py), inert unless the variable is set: with
# CLWL_TEST_KILL_AFTER_GOLD_WRITES=N the process SIGKILLs itself (its process group when it leads one, taking the
# Spark JVM along) right after its Nth gold table commit, as `kill -9` during a publish would.
_KILL_AFTER_ENV = "CLWL_TEST_KILL_AFTER_GOLD_WRITES"
_gold_writes = 0
_gold_writes_lock = threading.Lock()


def _after_gold_write() -> None:
    global _gold_writes
    target = os.environ.get(_KILL_AFTER_ENV, "").strip()
    if not target:
        return
    with _gold_writes_lock:
        _gold_writes += 1
        if _gold_writes == int(target):
            log.warning("publish: %s=%s: killing this process after gold write %d", _KILL_AFTER_ENV, target,
                        _gold_writes)
            if os.getpgrp() == os.getpid():
                os.killpg(os.getpgrp(), signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)


def _persist(df: DataFrame) -> DataFrame:
    if df.storageLevel.useMemory or df.storageLevel.useDisk:
        return df
    return df.persist(StorageLevel.MEMORY_AND_DISK)


def _with_versions(df: DataFrame, versions: Mapping[str, int]) -> DataFrame:
    """run_summary.table_versions = the caller's map (e.g. silver versions it read) updated with the gold
    versions written by this publish."""
    if "table_versions" not in df.columns:
        return df
    keys = list(versions)
    written = F.create_map(*[x for k in keys for x in (F.lit(k), F.lit(int(versions[k])).cast("long"))]) \
        if keys else F.create_map().cast("map<string,bigint>")
    given = F.coalesce(F.col("table_versions"), F.create_map().cast("map<string,bigint>"))
    kept = F.map_filter(given, lambda k, v: ~k.isin(keys)) if keys else given
    return df.withColumn("table_versions", F.map_concat(kept, written))


def write_run_date(df: DataFrame, path: str, day: dt.date, options: Mapping[str, str] | None = None) -> None:
    """Replace `day`'s partition of the Delta table at `path` with `df` (staging and gold tables alike)."""
    (df.write.format("delta").mode("overwrite")
       .option("replaceWhere", f"run_date = DATE'{day.isoformat()}'")
       .option("mergeSchema", "true")  # a new column is an extension; a changed type still fails
       .options(**(options or {}))  # table properties, taken when the write creates the table
       .partitionBy("run_date")
       .save(path))


def _write_all(spark: SparkSession, lake: Lake, day: dt.date, frames: Mapping[str, DataFrame],
               previous: Mapping[str, int | None], staged: Mapping[str, tuple[str, int]] | None = None
               ) -> dict[str, int]:
    """Write the tables: side by side (a Delta write of a small table is mostly its commit), then run_summary
    last, with the versions of the others. A table in ``staged`` takes the staged files themselves when it can
    (at 10M messages the copy of routing_replay's rows was 47 s)."""
    from concurrent.futures import ThreadPoolExecutor

    versions: dict[str, int] = {}
    written: list[str] = []
    order = [t for t in GOLD_TABLES if t in frames]
    first = [n for n in order if n != "run_summary"]

    def write(name: str) -> str:
        path = str(lake.table(f"gold.{name}"))
        spec = TABLES[f"gold.{name}"]
        if not is_delta_table(path):  # a first publish: the table with its constraints, then the rows
            create_empty(spec, path)
        df = frames[name]
        if name == "run_summary":
            df = _with_versions(df, versions)
        # The staged files may become gold's as they are when their rows keep every CHECK constraint of the gold
        # table (a count over the columns they name); else Spark writes the rows, and Delta refuses the wrong one.
        if name not in (staged or {}) or (checked := _kept_constraints(df, spec.constraints)) is None \
                or replace_partition_with_files(path, *staged[name], "run_date", day.isoformat(),
                                                checked=checked) is None:
            write_run_date(df, path, day, ROUTING_REPLAY_OPTIONS if name == "routing_replay" else None)
        _after_gold_write()
        return name

    failed: tuple[str, BaseException] | None = None
    with ThreadPoolExecutor(max_workers=max(1, len(first))) as pool:
        for name, future in [(n, pool.submit(write, n)) for n in first]:
            try:
                future.result()
                written.append(name)
            except Exception as exc:  # noqa: BLE001 - reported below, after the others finished
                failed = failed or (name, exc)
    if failed is None and "run_summary" in order:
        for name in written:
            versions[f"gold.{name}"] = lake.version(f"gold.{name}")
        try:
            written.append(write("run_summary"))
        except Exception as exc:  # noqa: BLE001
            failed = ("run_summary", exc)
    if failed is not None:
        # Validation passed but a write failed (disk, schema clash with the published table, ...): put back the
        # run date's partition of what this publish already wrote, as it was in the version before (other
        # partitions, possibly written meanwhile by another run date, are left alone; RESTORE would not).
        name, exc = failed
        for done in written:
            _roll_back(spark, lake, f"gold.{done}", day, previous.get(f"gold.{done}"))
        raise PublishError(f"writing gold.{name} failed ({type(exc).__name__}: {_why(exc)}); put back "
                           f"{', '.join('gold.' + n for n in written) or 'nothing'}") from exc
    for name in written:
        if f"gold.{name}" not in versions:  # the others were read before run_summary was written
            versions[f"gold.{name}"] = lake.version(f"gold.{name}")
        log.info("publish: gold.%s version %d", name, versions[f"gold.{name}"])
    return versions


def _why(exc: BaseException) -> str:
    """An error in one line: its first line, or for Delta's own errors (a Py4J error or a Spark analysis error
    carries them further down) each ``[DELTA_...]`` line, with the values of the row a constraint refused."""
    lines = [line.strip() for line in str(exc).splitlines()]
    lines = lines[:lines.index("JVM stacktrace:")] if "JVM stacktrace:" in lines else lines
    said: list[str] = []
    for i, line in enumerate(lines):
        if "[DELTA_" in line:
            said.append(line[line.index("[DELTA_"):])
            said += itertools.takewhile(lambda v: v.startswith("- "), lines[i + 1:])
    return " ".join(dict.fromkeys(said)) if said else next((line for line in lines if line), "")


def _kept_constraints(df: DataFrame, constraints: Mapping[str, str]) -> dict[str, str] | None:
    """``constraints`` when no row of ``df`` breaks one (an expression that is false or null, as Delta judges),
    else None."""
    if not constraints:
        return {}
    kept = " AND ".join(f"coalesce(({expr}), false)" for expr in constraints.values())
    return None if df.where(f"NOT ({kept})").limit(1).count() else dict(constraints)


def _roll_back(spark: SparkSession, lake: Lake, key: str, day: dt.date, before: int | None) -> None:
    path = str(lake.table(key))
    try:
        if before is None:  # the table is new: it had no rows of this date (SQL: classic and Connect alike)
            spark.sql(f"DELETE FROM delta.`{path}` WHERE run_date = DATE'{day.isoformat()}'")
        else:
            old = read_table(spark, lake, key, before)
            write_run_date(on_date(old, day), path, day)
        log.warning("publish: put back %s, run date %s, as of version %s", path, day, before)
    except Exception:  # pragma: no cover - report the original failure
        log.exception("publish: could not put back %s as of version %s", path, before)


def _write_result(outcome: ValidationOutcome, folder: Path) -> Path:
    layer, _, table = outcome.table.partition(".")
    return _write_json(folder / (f"{table}.json" if layer == "gold" else f"{outcome.table}.json"),
                       outcome.result_json)


def _write_summary(folder: Path, run_id: str, day: dt.date, published: bool, failures: list[str],
                   versions: Mapping[str, int], previous: Mapping[str, int | None]) -> Path:
    return _write_json(folder / "_publish.json", {
        "run_id": run_id, "run_date": day.isoformat(), "published": published, "failures": failures,
        "table_versions": dict(versions), "previous_versions": dict(previous),
        "at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    })


def _write_json(path: Path, data: dict) -> Path:
    text = json.dumps(data, indent=2, default=str) + "\n"
    put_object(path, text.encode("utf-8"))  # whole or absent: one put, or a file renamed into place
    return path

"""silver.message_events, rebuilt per (run date, sending queue manager) from all bronze put rows of that sender
and date, and the put rows held back from it (duplicate msg_ids across files, put times outside the run date)
as quarantine rows (see *Message events* in the ``spark.ingest`` package documentation)."""

from __future__ import annotations

import os
import signal
import sys
from datetime import datetime, timezone
from typing import Iterable, NamedTuple

from clwl.days import RunDate
from clwl.lake.put_records import VIEWS
from clwl.landing.formats import PUT_FORMATS, SELF_CHECKED_FORMATS, TRACE_FORMAT
from clwl.landing.held_back import (
    DATE_REASON,
    DIFFERS,
    DUPLICATE_REASON,
    KEYS,
    PUT_TIME_SPARK,
    SAME_RECORD,
    compared_fields,
    template_parts,
)
from clwl.parse.activity_trace import ORIGIN as TRACE_ORIGIN
from spark.ingest.context import IngestRun
from spark.ingest.scratch import QUARANTINE_TABLE
from spark.ingest.writes import holds_rows, run_writes, sql_in, sql_string
from spark.tables import TABLES, read, read_stored

# ----------------------------------------------------------------------------------------------------------
# Message events: bronze put rows -> silver.message_events, once per message of its own run date

#: ``silver.quarantine.level`` of a put record its parser accepted (it is in bronze) but that silver.message_events
#: does not take: a msg_id already put in an earlier file of the sender and day, or a put time outside the run
#: date. These rows are recomputed with the message events; ``raw`` is the record as a put CSV row.
MESSAGE_LEVEL = "message"
#: Formats whose files give put records: their senders' and days' message events are rebuilt when they change.
PUT_PARSERS = PUT_FORMATS
PUTS = "bronze.put_records"
TRACE_TABLE = "bronze.activity_operations"  # a traced put's ApplName


# SELF_CHECKED_FORMATS (clwl.landing.formats): put file formats whose parser refuses a msg_id repeated within the file
# (clwl.parse.puts): a sender's day that only one such file has rows of can hold no repeated msg_id. An activity
# trace has no such check.


class MessageScope(NamedTuple):
    """What a run rebuilds of silver.message_events (:func:`message_scope`)."""

    pairs: tuple[tuple[str, str], ...]  # (run date, sending queue manager) rebuilt
    files: frozenset[str]  # put files whose held-back quarantine rows are rebuilt
    order_files: frozenset[str]  # every put file of the pairs (their order decides which copy is kept)
    single: frozenset[tuple[str, str]]  # pairs whose rows are all in one file of SELF_CHECKED_FORMATS
    traced: frozenset[tuple[str, str]] = frozenset()  # pairs with rows of an activity trace (their ApplName is read)
    touched: frozenset[str] = frozenset()  # the put files of this run: new, changed or removed (their lake rows go)
    # the tables read here that had files on the scope's dates before this run wrote (the others are not read)
    in_lake: frozenset[str] = frozenset((*VIEWS[PUTS], TRACE_TABLE))


def message_scope(run: IngestRun, frames: dict, touched: list[tuple[str, str, str]]) -> MessageScope:
    """What a run's put files make rebuild (one Spark job, before bronze is written).

    pairs: every (run date, sending queue manager) with a row in a touched put file, before or after this run,
    and every pair of the files that hold rows of those (so that each file in ``files`` has all of its senders
    rebuilt). files: the put files, after this run, that hold rows of a touched pair. single: the pairs that,
    after this run, have rows in one put file only, which its parser checked for repeated msg_ids: the search
    for msg_ids repeated across files (an aggregation over every message of the pair) is left out for them."""
    return scope_of_put_files(run, frames, {s: d for s, d, p in touched if p in PUT_PARSERS})


def scope_of_put_files(run: IngestRun, frames: dict, puts: dict[str, str]) -> MessageScope:
    """:func:`message_scope` of the touched put files ``puts`` (source file -> run date)."""
    from pyspark.sql import functions as F

    spark, config = run.spark, run.config

    if not puts:
        return MessageScope((), frozenset(), frozenset(), frozenset())
    cols = ("run_date", "source_file", "sending_qmgr", "format")
    days = [RunDate(d).day for d in sorted(set(puts.values()))]
    # A new run date (or lake) has no put rows in the lake yet: its Spark read, a dozen jobs of Delta snapshots
    # and file listings for no row, is left out (the files in the Delta log tell, no job).
    in_lake = frozenset(k for k in (*VIEWS[PUTS], TRACE_TABLE) if holds_rows(run.lake, k, days))
    parts = []
    if in_lake & set(VIEWS[PUTS]):
        parts.append(read(spark, config, PUTS).where(F.col("run_date").isin(days))
                     .select(*cols, F.lit(False).alias("new")))
    if PUTS in frames:
        parts.append(frames[PUTS].select(*cols, F.lit(True).alias("new")))
    found = set()
    if parts:
        before = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
        found = {(r["run_date"].isoformat(), r["source_file"], r["sending_qmgr"], r["format"], r["new"])
                 for r in before.distinct().collect()}
    changed = {(d, q) for d, s, q, _, _ in found if s in puts}
    after = {(d, s, q): f for d, s, q, f, new in found if new or s not in puts}
    files = frozenset(s for d, s, q in after if (d, q) in changed)
    pairs = changed | {(d, q) for d, s, q in after if s in files}
    files_of: dict[tuple[str, str], set[str]] = {}
    unchecked: set[tuple[str, str]] = set()
    for (d, s, q), f in after.items():
        files_of.setdefault((d, q), set()).add(s)
        if f not in SELF_CHECKED_FORMATS:
            unchecked.add((d, q))
    single = frozenset(p for p in pairs if len(files_of.get(p, ())) <= 1 and p not in unchecked)
    traced = frozenset((d, q) for (d, s, q), f in after.items() if f == TRACE_FORMAT and (d, q) in pairs)
    return MessageScope(tuple(sorted(pairs)), files, frozenset(s for d, s, q in after if (d, q) in pairs), single,
                        traced, frozenset(puts), in_lake)


def _file_order(lake, files: Iterable[str], ingested_at: datetime) -> list[tuple[str, int]]:
    """``(source_file, rank)``: the put files in the order their copies of a message are kept: by first ingest
    (the earliest run-log row since the file last appeared in the landing folder; ``ingested_at`` for a file new
    in this run), then by name. Read from the run log without a JVM (it is small)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = sorted(set(files))
    log = lake.rows("silver.ingest_files", ["source_file", "ingested_at", "ingest_run_id", "status"])
    log = log.filter(pc.is_in(log.column("source_file"), value_set=pa.array(wanted, pa.string())))

    def utc(t: datetime) -> datetime:
        return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)

    first: dict[str, datetime] = {}
    for r in sorted(log.to_pylist(), key=lambda r: (utc(r["ingested_at"]), r["ingest_run_id"])):
        if r["status"] == "removed":
            first.pop(r["source_file"], None)
        else:
            first.setdefault(r["source_file"], utc(r["ingested_at"]))
    now = utc(ingested_at)
    return [(s, n) for n, s in enumerate(sorted(wanted, key=lambda s: (first.get(s, now), s)))]


def _put_csv_row():
    """A put record of bronze as a row of the put CSV (columns of ``clwl.parse.puts.PUT_COLUMNS``, in order). The
    optional application, the last column, is written only when the record has one: a row of a file without
    the column reads back under that file's header."""
    from pyspark.sql import functions as F

    from clwl.parse.puts import PUT_COLUMNS

    def text(name: str):
        if name == "put_time":
            return F.date_format(name, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")  # the session time zone is UTC
        value = F.col(name).cast("string")  # booleans: true / false
        if name in ("open_handle", "group_id", "application"):  # kept as given: may need CSV quotes
            value = F.when(value.rlike('[",\\r\\n]'),
                           F.concat(F.lit('"'), F.regexp_replace(value, '"', '""'), F.lit('"'))).otherwise(value)
        return value if name == "application" else F.coalesce(value, F.lit(""))  # concat_ws leaves a null out

    return F.concat_ws(",", *[text(c.name) for c in PUT_COLUMNS])


# ----------------------------------------------------------------------------------------------------------
# The application of a put: clwl.analyses.incidents.application_of as Spark columns (a Python UDF over every message
# would cost more than the rest of the rebuild). tests/spark/test_put_application.py holds the two to one
# table of cases.

#: The characters ``str.strip()`` removes (those ``str.isspace()`` is true of): application_of strips its names,
#: and so must the Spark rule (Spark's trim cuts blanks only).
PY_SPACES = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
             + "\u2028\u2029\u202f\u205f\u3000")
#: An activity trace's open handle begins with its connection (Correl_id hex), not a name (clwl.analyses.incidents).
_CONNECTION_ID = "\\A[0-9A-Fa-f]{32,}\\z"


def _stripped(column):
    """``str.strip()``: btrim removes any of the given characters from both ends (no regex per row)."""
    from pyspark.sql import functions as F

    return F.btrim(column, F.lit(PY_SPACES))


def application_column(column, traced_appl_name, open_handle):
    """:func:`clwl.analyses.incidents.application_of` as a Spark column: the put file's application (``column``), else the
    trace's ApplName (``traced_appl_name``), else the first field of an ``application:pid:handle`` open handle
    (not a trace's connection id); each stripped, an empty one skipped; null when none names one."""
    from pyspark.sql import functions as F

    given, traced = _stripped(column), _stripped(traced_appl_name)
    name = _stripped(F.substring_index(open_handle, ":", 1))
    from_handle = F.when(open_handle.contains(":") & (name != "") & ~name.rlike(_CONNECTION_ID), name)
    return F.coalesce(F.when(given != "", given), F.when(traced != "", traced), from_handle)


def _with_application(spark, config, events, scope: MessageScope, frames: dict):
    """The message events with ``application`` by :func:`application_column`: bronze's column (the put file's, as
    given), else for a traced put the ApplName its MQPUT or MQPUT1 row of bronze.activity_operations carries (the
    same file and line: an MQPUT1 has no open handle to find its connection by), else the open handle."""
    from pyspark.sql import functions as F

    traced = F.lit(None).cast("string")
    if scope.traced:
        dates = sorted({d for d, _ in scope.traced})
        # The lake's rows of the files this run touched are its own, in hand (step 3 replaced them): without
        # other files on those dates before this run, read from the scratch files, not back from the table.
        ops = (frames[TRACE_TABLE] if TRACE_TABLE not in scope.in_lake and TRACE_TABLE in frames
               else read(spark, config, TRACE_TABLE))
        names = (ops.where(sql_in("run_date", dates))
                 .where(F.col("operation").isin("MQPUT", "MQPUT1") & F.col("application_name").isNotNull())
                 .select("run_date", "source_file", "position", F.col("application_name").alias("_appl_name")))
        events = events.join(names, ["run_date", "source_file", "position"], "left")
        traced = F.when(F.col("source") == TRACE_ORIGIN, F.col("_appl_name"))
    return events.withColumn("application", application_column(F.col("application"), traced, F.col("open_handle")))


def put_rows(spark, config, scope: MessageScope, frames: dict, where: str):
    """Every accepted put row of the scope's pairs, as bronze.put_records has them: the lake's (the view of
    clwl.lake.put_records) but those of the files this run touched, and this run's rows of those files (``frames``).
    Reading the view again after the writes of :func:`message_jobs` began gives the same rows (a row in both of
    its tables is taken once), so Spark may recompute it. Without put rows in the lake on the scope's dates
    (``scope.in_lake``), this run's rows only."""
    from pyspark.sql import functions as F

    mine = frames[PUTS].where(where) if PUTS in frames else None
    if not scope.in_lake & set(VIEWS[PUTS]) and mine is not None:
        return mine
    rows = read(spark, config, PUTS).where(where)
    if scope.touched:
        rows = rows.where(~F.col("source_file").isin(sorted(scope.touched)))
    return rows if mine is None else rows.unionByName(mine)


def message_jobs(ingest, scope: MessageScope, frames: dict):
    """The writes of silver.message_events for the scope's pairs (run date, sending queue manager), of the put
    rows held back from it (the only rows bronze.put_records stores) and of their quarantine rows (level
    :data:`MESSAGE_LEVEL`, for the scope's files), from every accepted put row of those pairs (:func:`put_rows`).
    ``(phases, held, kinds, losers)``: phases: lists of writes, each list run after the one before (see
    :func:`_phases`); held per file of the scope's files = held-back rows now - before; kinds: held-back rows by
    kind (duplicate, date); losers: a persisted DataFrame to unpersist after the writes.

    A row is held back when its put time is not on its run date (UTC), or, among the others, when its msg_id was
    put before by the same sending queue manager on the same run date in an earlier copy: by file order
    (:func:`_file_order`: first ingest, then name), then position. The decision and its reasons are
    clwl.landing.held_back's, which clwl check applies in Python. One aggregation finds the repeated msg_ids,
    over the pairs whose rows are in more than one file or in an activity trace (``scope.single`` cannot repeat
    one: 20 s of a 10M messages' ingest); only their rows are ranked (a window over msg_id)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark, config = ingest.spark, ingest.config
    where = _pairs_where(scope.pairs)
    # source: the put file's format; an activity trace's rows (format amqsact) are activity_trace events.
    bronze = put_rows(spark, config, scope, frames, where).withColumn(
        "source", F.when(F.col("format") == TRACE_FORMAT, F.lit(TRACE_ORIGIN)).otherwise(F.col("format")))
    in_day = F.to_date("put_time") == F.col("run_date")  # the session time zone is UTC
    line = F.col("position").cast("string")
    day = F.date_format("run_date", "yyyy-MM-dd")
    outside = bronze.where(~in_day).select(
        "run_date", "observing_qmgr", "source_file", "position", "format", _put_csv_row().alias("raw"),
        F.lit("date").alias("kind"),
        _reason(DATE_REASON, put_time=F.date_format("put_time", PUT_TIME_SPARK), run_date=day,
                source_file=F.col("source_file"), position=line, put_date=F.date_format("put_time", "yyyy-MM-dd"),
                folder=F.coalesce("observing_qmgr", "sending_qmgr")).alias("reason"))

    good = bronze.where(in_day)
    multi = [p for p in scope.pairs if p not in scope.single]
    if not multi:
        return _held_back(ingest, scope, where, bronze, good, outside, frames)
    keys = list(KEYS)
    fields = compared_fields(TABLES["silver.message_events"].columns)
    may_repeat = good if len(multi) == len(scope.pairs) else good.where(_pairs_where(multi))
    repeated = may_repeat.groupBy(*keys).count().where(F.col("count") > 1).drop("count")
    order = _file_order(ingest.lake, scope.order_files, ingest.ingested_at)  # only where copies may repeat: a run-log read
    ranks = spark.createDataFrame(order, "source_file string, _order int")
    w = Window.partitionBy(*keys).orderBy("_order", "source_file", "position")
    ranked = (may_repeat.join(repeated, keys, "left_semi").join(F.broadcast(ranks), "source_file", "left")
              .withColumn("_order", F.coalesce("_order", F.lit(1 << 30)))
              .withColumn("_n", F.row_number().over(w))
              .withColumn("_kept", F.first(F.struct("source_file", "position", *fields)).over(w))
              .where(F.col("_n") > 1))
    differs = F.concat_ws(", ", *[F.when(~F.col(c).eqNullSafe(F.col(f"_kept.{c}")), F.lit(c)) for c in fields])
    duplicates = ranked.select(
        "run_date", "observing_qmgr", "source_file", "position", "format", _put_csv_row().alias("raw"),
        F.lit("duplicate").alias("kind"),
        _reason(DUPLICATE_REASON, msg_id=F.col("msg_id"), kept_file=F.col("_kept.source_file"),
                kept_position=F.col("_kept.position").cast("string"), source_file=F.col("source_file"),
                position=line, difference=F.when(differs == "", F.lit(SAME_RECORD))
                .otherwise(_reason(DIFFERS, fields=differs))).alias("reason"))
    return _held_back(ingest, scope, where, bronze, good, outside.unionByName(duplicates), frames)


def _reason(template: str, **columns):
    """A reason template of clwl.landing.held_back as a Spark column: its literal text and the given columns, in order."""
    from pyspark.sql import functions as F

    parts = []
    for literal, name in template_parts(template):
        if literal:
            parts.append(F.lit(literal))
        if name is not None:
            parts.append(columns[name])
    return F.concat(*parts)


def _pairs_where(pairs) -> str:
    """A SQL predicate selecting the rows of these (run date, sending queue manager) pairs."""
    by_date: dict[str, list[str]] = {}
    for d, q in pairs:
        by_date.setdefault(d, []).append(q)
    return " OR ".join(f"(run_date = {sql_string(d)} AND {sql_in('sending_qmgr', qs)})" for d, qs in sorted(by_date.items()))


def _held_back(ingest: IngestRun, scope: MessageScope, where: str, puts, good, losers, frames: dict):
    """The writes of :func:`message_jobs`, given the rows held back (``losers``: the put rows outside their run
    date and the later copies of repeated msg_ids) of ``puts``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark, config, run_id = ingest.spark, ingest.config, ingest.run_id

    files = scope.files
    losers = losers.persist()
    found = losers.groupBy("source_file", "kind").count().collect()
    kinds: dict[str, int] = {}
    now: dict[str, int] = {}
    for r in found:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + r["count"]
        if r["source_file"] in files:
            now[r["source_file"]] = now.get(r["source_file"], 0) + r["count"]

    events = good if not found else good.join(losers.select("source_file", "position"),
                                             ["source_file", "position"], "left_anti")
    # After the held-back decision, which compares bronze's application as given (as clwl check does).
    events = _with_application(spark, config, events.withColumn("application_given", F.col("application")), scope,
                               frames)
    jobs = [("silver.message_events", events, where)]
    held: dict[str, int] = {}
    if files:
        # The quarantine rows of the files now: their parsers' rows (seq 0..n-1) and the held-back ones before.
        # Those of the files this run touched are the rows it just wrote (step 3 replaced theirs): read from its
        # scratch files in hand, not back from the Delta table; the lake is read for the others only.
        mine, others = sorted(files & scope.touched), sorted(files - scope.touched)
        parts = [read(spark, config, QUARANTINE_TABLE).where(sql_in("source_file", others))] if others else []
        if mine and QUARANTINE_TABLE in frames:
            parts.append(frames[QUARANTINE_TABLE].where(sql_in("source_file", mine)))
        before = [] if not parts else (
            (parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])).groupBy("source_file")
            .agg(F.max(F.when(F.col("level") != MESSAGE_LEVEL, F.col("seq"))).alias("last"),
                 F.sum(F.when(F.col("level") == MESSAGE_LEVEL, 1).otherwise(0)).alias("held"))
            .collect())
        last = {r["source_file"]: r["last"] for r in before if r["last"] is not None}
        held = {s: now.get(s, 0) - next((r["held"] for r in before if r["source_file"] == s), 0) for s in files}
        offsets = spark.createDataFrame([(s, int(last.get(s, -1)) + 1) for s in sorted(files)],
                                        "source_file string, _first_seq int")
        t = TABLES[QUARANTINE_TABLE]
        rows = (losers.where(F.col("source_file").isin(sorted(files)))
                .join(F.broadcast(offsets), "source_file")
                .withColumn("seq", (F.col("_first_seq") + F.row_number().over(
                    Window.partitionBy("source_file").orderBy("position")) - 1).cast("int"))
                .withColumn("ingest_run_id", F.lit(run_id)).withColumn("level", F.lit(MESSAGE_LEVEL))
                .select(*t.columns))
        jobs.append((QUARANTINE_TABLE, rows, f"level = {sql_string(MESSAGE_LEVEL)} AND " + sql_in("source_file", files)))
    kept_back = (puts.select(*TABLES["bronze.put_records"].columns)
                 .join(losers.select("source_file", "position"), ["source_file", "position"], "left_semi"))
    return _phases(spark, config, scope, where, kept_back, jobs, bool(found)), {s: n for s, n in held.items() if n}, \
        kinds, losers


def _phases(spark, config, scope: MessageScope, where: str, kept_back, jobs: list, any_held: bool) -> list[list]:
    """The writes in the order that keeps every put row of a file this run did not touch in the lake at every
    moment (an ingest may be stopped between two commits; the next run touches the same files again and reads
    the rest from the lake): first bronze.put_records gets the rows held back now while keeping those it held
    (a row that stops being held back is in no table until silver is written), then silver.message_events and
    the quarantine, then bronze.put_records is left with the rows held back now, when it held any others. A row
    in both tables meanwhile is read once (:func:`put_rows`). No bronze write when it holds nothing of the
    pairs and nothing is held back: a new day without repeats writes each put row once, to silver."""
    from pyspark.sql import functions as F

    key = PUTS
    stored = read_stored(spark, config, key).where(where) if key in scope.in_lake else None  # no file: no row
    has_stored = stored is not None and bool(stored.limit(1).count())
    if not has_stored and not any_held:
        return [jobs]
    if has_stored:
        stale = stored
        if scope.touched:
            stale = stale.where(~F.col("source_file").isin(sorted(scope.touched)))
        stale = stale.join(kept_back.select("source_file", "position"), ["source_file", "position"], "left_anti")
        if stale.limit(1).count():
            return [[(key, kept_back.unionByName(stale), where)], jobs, [(key, kept_back, where)]]
    return [[(key, kept_back, where)], jobs]


def write_phases(spark, config, phases: list[list], side_jobs: list = ()) -> dict[str, int]:
    """Run :func:`message_jobs`' phases in order, ``side_jobs`` (other tables' writes) beside the phase that
    writes silver.message_events; the rows that phase wrote per table."""
    main = next(i for i, p in enumerate(phases) if any(k == "silver.message_events" for k, _, _ in p))
    counts: dict[str, int] = {}
    for n, phase in enumerate(phases, 1):
        if n - 1 == main:
            counts = run_writes(spark, config, [*phase, *side_jobs], count=True)
        else:
            run_writes(spark, config, phase)
        if os.environ.get(STOP_AFTER_PHASE_ENV, "").strip() == str(n):
            # kill -9, as a crash would: no finally, no clean-up of the run, the JVM gone with its process group.
            print(f"{STOP_AFTER_PHASE_ENV}={n}: killing this process after phase {n} of its put rows' writes",
                  file=sys.stderr, flush=True)
            if os.getpgrp() == os.getpid():
                os.killpg(os.getpgrp(), signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)
    return counts


# Test-only (tests/spark/test_put_rows_once.py), inert unless set: SIGKILL the ingest right after the Nth phase of
# write_phases, as `kill -9` would (each phase's commits done, the run log not appended, nothing cleaned up).
STOP_AFTER_PHASE_ENV = "CLWL_TEST_STOP_AFTER_PUT_PHASE"

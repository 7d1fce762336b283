"""The Spark side of the table registry: every Delta table of the lake as a :class:`Table`, the pure definition
in clwl/lake/registry.py (columns, partitioning, keys, Delta statistics columns) with its Spark ``StructType``
(``.schema``, built from the registry's column types when first asked for), and the helpers that create, check
and read the tables with Spark.

Which tables exist and where they live is clwl/lake/door.py's (the map of the lake, pure Python); a table lives at
``<lake>/<layer>/<name>`` (``PipelineConfig.table_path``), and a run's gold tables are staged under
``<lake>/staging/<name>`` first. Jobs never spell a path or a schema themselves: they take
``TABLES["silver.quarantine"]`` and call :func:`path`, :func:`ensure_table` or :func:`read_table` (the one Spark
read of a lake table; without Spark, clwl.lake.door.Lake reads versions and rows). The conventions
(time zones, run_date, source_file, position, keys) are the registry's docstring.

Importing the module loads no pyspark: the type classes are imported when a schema is first built, so a reader
of column names and positions (the ingest's parse body run by ``clwl check``) needs only the registry.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from typing import TYPE_CHECKING, Iterable

from clwl.days import RunDate
from clwl.lake.door import TABLE_KEYS, Lake, is_delta_table, snapshot
from clwl.lake.put_records import TABLE_PROPERTIES, VIEWS, view_sql
from clwl.lake.registry import SPECS, TableSpec, check_partitioning, constraints_in, same_expression

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import DataType, StructType

log = logging.getLogger(__name__)

__all__ = ["INGEST_TABLES", "TABLES", "Table", "add_missing_columns", "check_partitioning", "create_empty",
           "ensure_properties", "ensure_table", "ensure_tables", "path", "read", "read_stored", "read_table",
           "table"]


class Table(TableSpec):
    """A table of the registry (clwl/lake/registry.py) with its Spark schema."""

    @property
    def schema(self) -> "StructType":
        return _schema(self.key)


def spark_type(name: str) -> "DataType":
    """The Spark type of a registry column type (clwl.lake.registry.TYPES), with its null rule."""
    from pyspark.sql import types as T

    simple = {"string": T.StringType(), "int": T.IntegerType(), "bigint": T.LongType(), "boolean": T.BooleanType(),
              "double": T.DoubleType(), "date": T.DateType(), "timestamp": T.TimestampType(),
              "timestamp_ntz": T.TimestampNTZType(),
              "array<string>": T.ArrayType(T.StringType(), False),  # elements never null
              "map<string,string>": T.MapType(T.StringType(), T.StringType(), valueContainsNull=True),
              "map<string,bigint>": T.MapType(T.StringType(), T.LongType(), valueContainsNull=True)}
    return simple[name]


@functools.lru_cache(maxsize=None)
def _schema(key: str) -> "StructType":
    from pyspark.sql.types import StructField, StructType

    return StructType([StructField(c.name, spark_type(c.type), c.nullable) for c in SPECS[key].fields])


TABLES: dict[str, Table] = {k: Table(**{f.name: getattr(s, f.name) for f in dataclasses.fields(s)})
                             for k, s in SPECS.items()}
if tuple(TABLES) != TABLE_KEYS:  # the lake's map (clwl/lake/door.py) and its schemas name the same tables
    raise RuntimeError(f"spark/tables.py registers {sorted(set(TABLES) ^ set(TABLE_KEYS))} differently from clwl/lake/door.py")
#: The tables ingest writes (bronze and silver); gold tables are written per run date by replay/detect/publish.
INGEST_TABLES: dict[str, Table] = {k: t for k, t in TABLES.items() if t.layer != "gold"}


def table(which: str | Table) -> Table:
    """A Table from its key (``"silver.quarantine"``) or itself."""
    if isinstance(which, Table):
        return which
    try:
        return TABLES[which]
    except KeyError:
        raise KeyError(f"no table {which!r}; known: {', '.join(sorted(TABLES))}") from None


def path(config, which: str | Table) -> str:
    """``<lake>/<layer>/<name>`` of a table, as a string (what Spark and deltalake take)."""
    t = table(which)
    return config.table_path(t.layer, t.name)


def ensure_table(spark, config, which: str | Table) -> str:
    """Create the (empty) Delta table if it does not exist yet; its path."""
    t = table(which)
    location = path(config, t)
    if is_delta_table(location):
        check_partitioning(t, location)
        add_missing_columns(spark, t, location)
        if t.checks or t.change_data_feed:  # a read of the table's metadata: only where there is something to see
            ensure_properties(spark, t, location)
        return location
    create_empty(t, location)
    return location


def create_empty(t: Table | TableSpec, location: str, staged: bool = False) -> None:
    """Version 0 of a new table: the commit Spark's CREATE TABLE, then ALTER TABLE ADD CONSTRAINT for each of
    the registry's CHECK constraints, writes (schema, partitioning, properties, constraints, and the protocol
    Spark chooses for them), written as the Delta protocol's one JSON file. Spark took about a second of jobs per
    table on a cold JVM, which was a quarter of a small run's ingest; every later write to the table is Spark's
    (or spark/delta_commits.py's). A table another process created meanwhile is left as it is.
    ``staged``: a gold table's staging copy, without the CHECK constraints (the quality gate, not a refused
    write, reports a wrong row there) and without the change data feed."""
    import json
    import time
    import uuid

    from spark.delta_commits import metadata_action, write_commit

    t = table(t.key)
    schema = t.schema.json()
    properties = {"delta.enableDeletionVectors": "false"}  # the session's default for Spark's own creates
    properties.update(t.properties)
    properties.update(TABLE_PROPERTIES.get(t.key, {}))
    checks, cdf = ({}, False) if staged else (t.constraints, t.change_data_feed)
    if not cdf:
        properties.pop("delta.enableChangeDataFeed", None)
    properties.update({f"delta.constraints.{name}": expr for name, expr in checks.items()})
    # Spark's choice (delta-spark 4): a timestamp without time zone or the change data feed needs table features,
    # and then the features the legacy protocol 1/2 implied (NOT NULL columns are invariants, and append-only) are
    # listed too, and CHECK constraints when there are; else the legacy protocol, 1/3 with CHECK constraints.
    ntz = '"timestamp_ntz"' in schema
    if ntz or cdf:
        features = ["timestampNtz"] * ntz + ["changeDataFeed"] * cdf + ["invariants", "appendOnly"]
        protocol = {"minReaderVersion": 3 if ntz else 1, "minWriterVersion": 7,
                    **({"readerFeatures": ["timestampNtz"]} if ntz else {}),
                    "writerFeatures": features + ["checkConstraints"] * bool(checks)}
    else:
        protocol = {"minReaderVersion": 1, "minWriterVersion": 3 if checks else 2}
    now = int(time.time() * 1000)
    txn = str(uuid.uuid4())
    metadata = metadata_action(schema, t.partition_by, properties, t.description, now)
    actions = [
        {"commitInfo": {"timestamp": now, "operation": "CREATE TABLE", "operationParameters": {
            "partitionBy": json.dumps(list(t.partition_by)), "description": t.description,
            "isManaged": "false", "properties": json.dumps(properties)},
            "isolationLevel": "Serializable", "isBlindAppend": True, "engineInfo": "clwl-analytics", "txnId": txn}},
        {"metaData": metadata},
        {"protocol": protocol},
    ]
    # With the commit, its checksum file as Spark writes it for an empty table: the first write then takes the
    # protocol and schema from it instead of a Spark job over the log (one job per table on a fresh lake).
    checksum = {"txnId": txn, "tableSizeBytes": 0, "numFiles": 0, "numMetadata": 1, "numProtocol": 1,
                "setTransactions": [], "domainMetadata": [], "metadata": metadata, "protocol": protocol,
                "allFiles": []}
    if write_commit(location, 0, actions):  # put-if-absent: never replaces a commit
        write_commit(location, 0, checksum, suffix="crc")


def ensure_tables(spark, config, which: Iterable[str | Table] | None = None) -> None:
    """Create every missing table (default: the ingest tables); check the others against the registry."""
    for t in [table(t) for t in (INGEST_TABLES.values() if which is None else which)]:
        ensure_table(spark, config, t)


def ensure_properties(spark, t: Table | TableSpec, location: str) -> list[str]:
    """A table made by an earlier version may lack the registry's CHECK constraints or its change data feed:
    add each missing constraint (ALTER TABLE ADD CONSTRAINT: Delta first checks every row of the table against
    it) and turn the feed on (ALTER TABLE SET TBLPROPERTIES), a commit each. What is already there costs a read
    of the table's metadata only. A constraint the table's rows break is not added: a warning names it, the
    rest goes on, and the next run tries again (after the dates that break it were rewritten). Returns what
    was done ("constraint <name>", "change data feed")."""
    config = snapshot(location).configuration or {}
    have = constraints_in(config)
    done: list[str] = []
    escaped = location.replace("`", "``")
    for name, expr in t.constraints.items():
        if name in have:
            if not same_expression(have[name], expr):
                log.warning("%s: constraint %s is %r, the registry's %s.%s is %r: left as it is", location, name,
                            have[name], t.key, name, expr)
            continue
        try:
            spark.sql(f"ALTER TABLE delta.`{escaped}` ADD CONSTRAINT {name} CHECK ({expr})")
        except Exception as exc:  # noqa: BLE001 - Delta's refusal (rows break it): said, not fatal
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            log.warning("%s: constraint %s CHECK (%s) not added: %s; the next run tries again", location, name,
                        expr, first)
            continue
        done.append(f"constraint {name}")
    if t.change_data_feed and config.get("delta.enableChangeDataFeed", "false").lower() != "true":
        spark.sql(f"ALTER TABLE delta.`{escaped}` SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')")
        done.append("change data feed")
    if done:
        log.info("%s (%s): %s", location, t.key, ", ".join(done))
    return done


def add_missing_columns(spark, t: Table, location: str) -> list[str]:
    """A lake made by an earlier version may lack columns added since (silver.message_events.source): add each
    missing nullable column where the registry has it (its old rows read null; they are filled when their file
    is ingested again). A missing column that may not be null, or a column whose type changed, cannot be
    merged: say so plainly, as for partitioning. Returns the columns added."""
    have = {f.name: f for f in snapshot(location).schema.fields}
    missing = [(i, f) for i, f in enumerate(t.schema.fields) if f.name not in have]
    for f in t.schema.fields:
        if f.name in have and type(have[f.name].type).__name__ == "PrimitiveType":
            # deltalake names primitive types as Spark's simpleString does (string, long, timestamp ...)
            spark_name = {"bigint": "long", "int": "integer"}.get(f.dataType.simpleString(), f.dataType.simpleString())
            if have[f.name].type.type != spark_name:
                raise RuntimeError(f"{location}: column {f.name} of this Delta table is {have[f.name].type.type} but "
                                   f"this version of clwl-analytics writes {t.key}.{f.name} as {spark_name}; move the "
                                   f"table away (or delete it) and run `clwl ingest` again to rebuild it from the "
                                   f"landing folder")
    if not missing:
        return []
    refused = [f.name for _, f in missing if not f.nullable]
    if refused:
        raise RuntimeError(f"{location}: this Delta table lacks the column(s) {', '.join(refused)} that this version "
                           f"of clwl-analytics writes to {t.key} and that cannot be added to existing rows (not "
                           f"nullable); move the table away (or delete it) and run `clwl ingest` again to rebuild "
                           f"it from the landing folder")
    escaped = location.replace("`", "``")
    for i, f in missing:
        where = "FIRST" if i == 0 else f"AFTER `{t.schema.fields[i - 1].name}`"
        spark.sql(f"ALTER TABLE delta.`{escaped}` ADD COLUMNS (`{f.name}` {f.dataType.simpleString()} {where})")
    return [f.name for _, f in missing]


def read_table(spark, lake, which: str | Table, version: int | None = None):
    """A table of the lake as a DataFrame, as of ``version`` (None: the latest): the one Spark read of a lake
    table. ``lake``: a :class:`clwl.lake.door.Lake`, or a PipelineConfig (its lake); ``which``: a key
    (``"silver.message_events"``, a staged gold table ``"staging.routing_replay"``) or a :class:`Table`. A table
    read through a view (``bronze.put_records``: clwl.lake.put_records) is the view, at the latest versions."""
    key = which.key if isinstance(which, Table) else which
    if key in VIEWS:
        if version is not None:
            raise ValueError(f"{key} is a view of {' and '.join(VIEWS[key])}: it has no version of its own")
        stored, events = (read_stored(spark, lake, k) for k in VIEWS[key])
        # spark.sql's DataFrame arguments: no temp view of ours to name or leak (Spark Connect takes them too)
        return spark.sql(view_sql("{stored}", "{events}", stored.columns, events.columns), stored=stored, events=events)
    return read_stored(spark, lake, key, version)


def on_date(df, run_date: RunDate | str):
    """``df``'s rows of one run date (its ``run_date`` column; ``run_date`` a RunDate, its text or its date): the
    one date filter of the pipeline's reads, a date literal Delta prunes the partitions by."""
    from pyspark.sql import functions as F

    return df.where(F.col("run_date") == F.lit(RunDate(run_date).day))


def read_stored(spark, lake, key: str, version: int | None = None):
    """The rows a table's own files hold (for a view's table, only what it stores: the ingest's read)."""
    where = lake if isinstance(lake, Lake) else Lake(lake.lake)
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", int(version))
    return reader.load(str(where.table(key)))


def read(spark, config, which: str | Table):
    """The table as a DataFrame (:func:`read_table` at its latest version)."""
    return read_table(spark, config, which)


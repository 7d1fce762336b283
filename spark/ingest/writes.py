"""Writing the lake's Delta tables: replace the rows a predicate selects, several tables side by side."""

from __future__ import annotations

from typing import Iterable

from clwl.lake.door import Lake
from spark.tables import TABLES, path


def sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(sql_string(v) for v in sorted(set(values)))})"


def holds_rows(lake: Lake, key: str, days: Iterable | None = None) -> bool:
    """Whether the table has a data file (in the partitions of these run dates, when given), from its Delta log:
    no Spark job. One that has none holds no rows there, so its Spark read (a job or more per Delta snapshot and
    file listing) can be left out; a new lake's tables and a new run date's partitions have none."""
    if not lake.exists(key):
        return False
    if days is None:
        return bool(lake.files(key))
    return any(lake.files(key, {"run_date": d}) for d in days)


def _write(spark, config, key: str, df, predicate: str, count: bool = False) -> int:
    """Replace the rows matching ``predicate`` with ``df``; rows written (-1 unless ``count``)."""
    t = TABLES[key]
    location = path(config, key)
    lake = Lake(config.lake) if count else None  # once for the write: before and after it
    before = lake.version(key) if lake is not None else None
    writer = df.select(*t.columns).write.format("delta").mode("overwrite").option("replaceWhere", predicate)
    if t.partition_by:
        writer = writer.partitionBy(*t.partition_by)
    writer.save(location)
    if not count:
        return -1
    # The rows of the table's latest commit (ours: the lake lock is held), from its Delta log: no Spark job. A
    # write that replaces nothing with nothing makes no commit: the latest is an earlier write's, so 0 rows.
    return 0 if lake.version(key) == before else lake.rows_committed(key)


def run_writes(spark, config, jobs: list[tuple[str, object, str]], count: bool = False) -> dict[str, int]:
    """Run independent table writes side by side (Spark schedules the jobs of several threads; the time of a
    small write is mostly Delta's commit, not work). Rows written per table when ``count``."""
    from concurrent.futures import ThreadPoolExecutor

    if not jobs:
        return {}
    with ThreadPoolExecutor(max_workers=min(4, len(jobs))) as pool:
        futures = {key: pool.submit(_write, spark, config, key, df, where, count) for key, df, where in jobs}
        return {key: future.result() for key, future in futures.items()}

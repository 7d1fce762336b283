"""spark.ingest.writes.holds_rows: whether a table has rows (on some run dates) by its Delta log alone. The ingest
leaves out its Spark reads of a table that has none (issue 45, lever 4), so a wrong "none" would lose the lake's
rows from a rebuild: a new table, one with rows on other dates, and one with rows on the date asked about."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

from clwl.lake.door import Lake
from spark.ingest.writes import holds_rows

KEY = "bronze.put_records"
DAY, OTHER = dt.date(2026, 11, 19), dt.date(2026, 11, 20)


def _append(lake: Lake, day: dt.date, rows: int) -> None:
    table = pa.table({"run_date": pa.array([day] * rows, pa.date32()), "source_file": pa.array(["f"] * rows, pa.string())})
    write_deltalake(str(lake.table(KEY)), table, partition_by=["run_date"], mode="append")


def test_a_table_holds_rows_only_on_the_dates_it_has_files_of(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    assert not holds_rows(lake, KEY)  # no table at all
    _append(lake, OTHER, 0)  # a commit without a data file: no rows
    assert not holds_rows(lake, KEY) and not holds_rows(lake, KEY, [DAY])
    _append(lake, OTHER, 2)
    assert holds_rows(lake, KEY) and holds_rows(lake, KEY, [OTHER]) and holds_rows(lake, KEY, [DAY, OTHER])
    assert not holds_rows(lake, KEY, [DAY]) and not holds_rows(lake, KEY, [])
    _append(lake, DAY, 1)
    assert holds_rows(lake, KEY, [DAY])

"""bronze.put_records as a view: each put row is stored once.

Every put record a parser accepts is a row of ``bronze.put_records``, and the rows the replay takes are
``silver.message_events``. The two were the same rows written twice (10M rows each at 10M messages). Now:

* ``silver.message_events`` stores the rows it takes, with what bronze had of them (``application_given``: the
  put file's application as given; ``source``: the file's format, an activity trace's as ``activity_trace``;
  ``ingest_run_id``: the run that read the file);
* the files of ``bronze.put_records`` store only the accepted rows silver does not take: the rows *held back*
  (a msg_id repeated across files, a put time outside the run date);
* every read of ``bronze.put_records`` (``spark.tables.read_table``, :meth:`clwl.lake.door.Lake.rows`, ``clwl query``)
  is the view :func:`view_sql`: silver's rows as bronze has them, then the stored rows. A row in both (an ingest
  stopped between its two writes; a lake of the earlier layout, whose bronze stored every row) is taken from
  bronze once, so the view is right for either layout and any mix.

This module holds the one definition of the view, as SQL that Spark and DataFusion both run.
"""

from __future__ import annotations

from typing import Iterable

from clwl.landing.formats import TRACE_FORMAT
from clwl.parse.activity_trace_records import ORIGIN as TRACE_ORIGIN

__all__ = ["EVENTS", "LAYOUT", "LAYOUT_PROPERTY", "STORED_SUFFIX", "TABLE_PROPERTIES", "VIEWS", "view_sql"]

#: The table the view takes its rows from, beside the stored ones.
EVENTS = "silver.message_events"
#: Tables read through a view of this module: key -> the tables the view reads (its own stored rows first).
VIEWS = {"bronze.put_records": ("bronze.put_records", EVENTS)}
#: What a view's own stored table is called where both must have names (a DataFusion session).
STORED_SUFFIX = "__stored"
#: The Delta table property that says bronze.put_records stores only the rows held back. A lake of the earlier
#: layout lacks it: its bronze stores every accepted row, which the view reads right; the next ingest migrates
#: it (spark.ingest.put_layout) and sets it.
LAYOUT_PROPERTY = "clwl.putRecords.stores"
LAYOUT = "held-back"
#: Properties a table is created with, by key.
TABLE_PROPERTIES = {"bronze.put_records": {LAYOUT_PROPERTY: LAYOUT}}

# A bronze column that silver names otherwise: the silver column it comes from, and how its value is got back.
_FROM_EVENTS = {
    "format": ("source", f"CASE WHEN e.source = '{TRACE_ORIGIN}' THEN '{TRACE_FORMAT}' ELSE e.source END"),
    "application": ("application_given", "e.application_given"),
}


def view_sql(stored: str, events: str, stored_columns: Iterable[str], events_columns: Iterable[str]) -> str:
    """SELECT of every accepted put record, in bronze.put_records' columns (``stored_columns``, its table's):
    ``events``' rows (by the names a session gives the two tables) that ``stored`` does not hold, then
    ``stored``'s rows. ``events_columns``: the columns the events table has (a lake of an earlier version may lack
    the newest; their values read null)."""
    have = set(events_columns)
    stored_columns = list(stored_columns)
    cols = []
    for c in stored_columns:
        needs, expr = _FROM_EVENTS.get(c, (c, f"e.{c}"))
        cols.append(f"{expr} AS {c}" if needs in have else f"CAST(NULL AS STRING) AS {c}")
    names = ", ".join(stored_columns)
    return (f"SELECT {', '.join(cols)} FROM {events} e "
            f"LEFT ANTI JOIN {stored} s ON e.source_file = s.source_file AND e.position = s.position "
            f"UNION ALL SELECT {names} FROM {stored}")

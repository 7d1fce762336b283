"""The one lake migration of the put rows: a lake whose bronze.put_records stores every accepted put row (made
before each put row was stored once, clwl.lake.put_records) is brought to the layout where it stores only the rows
held back from silver.message_events.

The view of clwl.lake.put_records reads either layout right, so readers never wait for this; the ingest runs it once,
first, when the table lacks :data:`clwl.lake.put_records.LAYOUT_PROPERTY`. It rebuilds the message events of every
(run date, sending queue manager) the lake holds put rows of, by the ingest's own rebuild with no file touched:
the same decisions, silver gains what bronze had of each row (``application_given``, ``ingest_run_id``), and
bronze is left with the held-back rows. The rebuild's writes keep every row in the lake at every commit, and the
property is set last, so a migration stopped on the way is simply run again by the next ingest."""

from __future__ import annotations

import time

from clwl.lake.door import snapshot
from clwl.lake.put_records import LAYOUT, LAYOUT_PROPERTY
from spark.ingest.context import IngestRun
from spark.ingest.message_events import message_jobs, scope_of_put_files, write_phases
from spark.tables import path, read

KEY = "bronze.put_records"


def migrated(config) -> bool:
    """Whether the lake's bronze.put_records stores only the held-back rows (from its Delta log, no Spark)."""
    return snapshot(path(config, KEY)).configuration.get(LAYOUT_PROPERTY) == LAYOUT


def migrate_put_records(run: IngestRun) -> bool:
    """Migrate a lake of the earlier layout (see the module) as part of the ingest ``run``; False when there is
    nothing to do."""
    spark, config, progress = run.spark, run.config, run.progress
    if migrated(config):
        return False
    t0 = time.monotonic()
    rows = read(spark, config, KEY)  # the view: every accepted put row, whichever layout
    puts = {r["source_file"]: r["run_date"].isoformat()
            for r in rows.select("source_file", "run_date").distinct().collect()}
    pairs = 0
    if puts:
        # Every put file as if new in this run gives the scope of all of them (pairs, files, traced ...); none is
        # touched, so the rebuild reads every row from the lake.
        scope = scope_of_put_files(run, {KEY: rows}, puts)._replace(touched=frozenset())
        phases, _held, _kinds, losers = message_jobs(run, scope, {})
        try:
            write_phases(spark, config, phases)
        finally:
            losers.unpersist()
        pairs = len(scope.pairs)
    location = path(config, KEY).replace("`", "``")
    spark.sql(f"ALTER TABLE delta.`{location}` SET TBLPROPERTIES ('{LAYOUT_PROPERTY}' = '{LAYOUT}')")
    progress(f"lake migrated: bronze.put_records now stores only the put rows held back from silver.message_events "
             f"(each put row stored once); {pairs} (run date, sending queue manager) rebuilt "
             f"({time.monotonic() - t0:.1f}s)")
    return True

"""The map of the lake: every folder and table under ``<lake>/``, named once. Pure Python (no pyspark).

::

    <lake>/
      bronze/<table>/            parsed records as read, one row per accepted record
      silver/<table>/            typed, de-duplicated inputs of the replay, and the configuration history
      staging/<table>/           a run's gold tables before the quality gate (write-audit-publish)
      gold/<table>/              the published tables
      gold/_published.json       the versions readers see (clwl/published.py): the commit point of a publish
      validation/<run_id>/<date>/  the quality gate's results
      reports/<date>/            report.html and summary.md of the published day
      whatif/<name>/             a what-if run's own staging/, gold/, validation/ and reports/
      _lock                      the writer lock (clwl/lakelock.py)

The schemas, partitioning and keys of the tables are the Spark side's (spark/tables.py, which checks that it
registers exactly the tables named here); `clwl query`, the report, the DAGs and the publish take the names
from this module.
"""

from __future__ import annotations

from pathlib import Path

LAYERS = ("bronze", "silver", "gold")

BRONZE_TABLES = ("capture_files", "mqsc_objects", "put_records", "xmitq_messages", "queue_accounting",
                 "activity_operations", "channel_statistics")
SILVER_TABLES = ("config_history", "channel_status", "message_events", "xmitq_contents", "queue_accounting",
                 "channel_statistics", "quarantine", "ingest_files")
#: The published tables, in the order a publish writes them: run_summary last, since it records the others'
#: versions.
GOLD_TABLES = ("routing_replay", "stuck_messages", "distribution", "run_summary")

TABLES_BY_LAYER = {"bronze": BRONZE_TABLES, "silver": SILVER_TABLES, "gold": GOLD_TABLES}
#: Every table as ``<layer>.<name>``.
TABLE_KEYS = tuple(f"{layer}.{name}" for layer, names in TABLES_BY_LAYER.items() for name in names)

#: The silver tables a run reads; run_summary.table_versions records the version of each it read.
RUN_INPUTS = ("silver.config_history", "silver.channel_status", "silver.message_events", "silver.xmitq_contents",
              "silver.queue_accounting", "silver.channel_statistics", "silver.quarantine", "silver.ingest_files")

STAGING = "staging"
VALIDATION = "validation"
REPORTS = "reports"
WHATIF = "whatif"
LOCK_FILE = "_lock"


def split_key(key: str) -> tuple[str, str]:
    """``"silver.quarantine"`` -> ``("silver", "quarantine")``; ValueError for a table the lake does not have."""
    if key not in TABLE_KEYS:
        raise ValueError(f"no table {key!r}; known: {', '.join(TABLE_KEYS)}")
    layer, name = key.split(".", 1)
    return layer, name


def whatif_root(lake: Path | str, name: str) -> Path:
    """Where a what-if run named ``name`` writes everything it produces."""
    return Path(lake) / WHATIF / name


def is_delta_table(path: Path | str) -> bool:
    """Whether ``path`` is a local (or mounted) Delta table: a folder with a ``_delta_log``."""
    return (Path(path) / "_delta_log").is_dir()


def latest_version(path: Path | str) -> int | None:
    """The latest committed version of the local Delta table at ``path`` from its commit files (None: no table
    or no commit), without reading the table."""
    log = Path(path) / "_delta_log"
    if not log.is_dir():
        return None
    versions = [int(p.name[:-5]) for p in log.glob("*.json") if p.name[:-5].isdigit()]
    return max(versions) if versions else None

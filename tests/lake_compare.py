"""Rows of a lake's table in a form two lakes can be compared by: the same landing published twice (in local mode and
on a cluster, into a folder and onto an object store) must give the same rows, except in the columns that differ
between two runs by design (run ids, times, versions, durations), which are left out, as bench/lake_digest.py
leaves them out.

Reads go through clwl.lake.door (the one door to the lake), so a lake on an object store is read as a local one is (the
environment's AWS_* variables must point at its store).
"""

from __future__ import annotations

import json
from pathlib import Path

from clwl.lake.door import Lake
from clwl.lake.registry import VOLATILE_COLUMNS
from clwl.lake.storage import LakeLocation

#: Gold tables the bundled samples leave empty, by design: gold.queue_depth (the samples' trace is QM5's sending
#: agents only, so every queue's line is an evidence gap: tests/spark/test_queue_depth_samples.py). A test that
#: publishes the samples asserts every other gold table has rows (gold.stuck_messages: 53 on 2026-11-20).
EMPTY_ON_SAMPLES = frozenset({"queue_depth"})


def comparable_rows(lake: Lake | Path | str | LakeLocation, key: str) -> list[str]:
    """The rows of table ``key`` (``"silver.message_events"``, ``"gold.routing_replay"``) without the
    :data:`clwl.lake.registry.VOLATILE_COLUMNS`, each as sorted-key JSON, sorted: equal lists mean equal tables, in any row order. A
    gold table is read at the version readers see (``gold/_published.json``), not at its latest commit."""
    lake = lake if isinstance(lake, Lake) else Lake(lake)
    version = lake.published_version(key) if key.startswith("gold.") else None
    data = lake.rows(key, version=version)  # a view (bronze.put_records) as every reader sees it
    kept = [c for c in data.column_names if c not in VOLATILE_COLUMNS]
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in data.select(kept).to_pylist())

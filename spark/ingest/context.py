"""What every step of one ingest shares, built once by spark.ingest.run.ingest and handed down."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

from clwl.lake.door import Lake
from spark.config import PipelineConfig


@dataclass(frozen=True)
class IngestRun:
    """``spark``: the session; ``config``: the landing, the lake and how to read them; ``lake``: the lake written
    (its door, built once); ``run_id`` / ``ingested_at``: the run's id and start, stamped on every row it writes;
    ``progress``: where its lines go (escaped); ``trace_tz``: the zone activity traces print local times in;
    ``version``: the code version recorded per file (clwl.landing: a file read by other code is read again)."""

    spark: Any
    config: PipelineConfig
    lake: Lake
    run_id: str
    ingested_at: datetime
    progress: Callable[[str], object]
    trace_tz: str | None = None
    version: str = ""

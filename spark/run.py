"""One run of the pipeline: what it reads and where it writes, computed once.

Every stage (spark/pipeline.py) and every DAG task takes a :class:`PipelineRun` instead of working out the
output lake, the staging paths or the what-if folder itself. Importable without pyspark (the DAG files build it).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import cached_property
from typing import Callable, Optional

from clwl.analyses.whatif import WhatIf
from clwl.lake.door import REPORTS, Lake
from spark.config import PipelineConfig

#: The kinds of run that make their own id: ``clwl run`` (and what-if runs), an ingest. A DAG run's id is derived
#: from Airflow's (dags/clwl_dag_support.py, pipeline_run_id): every task of the run must find the same one.
RUN_KINDS = ("run", "ingest")


def new_run_id(kind: str, now: Optional[datetime] = None) -> str:
    """A new run's id, the one way every run makes one: ``<kind>-<UTC time, YYYYmmddTHHMMSS>-<8 hex digits>``
    (``run-20261120T060000-1a2b3c4d``): unique, sorting by start time within a kind, and safe as a folder name
    (<lake>/validation/<run_id>). ``kind``: one of :data:`RUN_KINDS`; ``now``: the start (default: now)."""
    if kind not in RUN_KINDS:
        raise ValueError(f"not a kind of run: {kind!r} (kinds: {', '.join(RUN_KINDS)})")
    now = now or datetime.now(timezone.utc)
    return f"{kind}-{now:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class PipelineRun:
    """``config``: how the run works (landing folder, Spark master, ...) and, unless ``lake`` is given, the lake
    it reads. ``lake``: the lake the run reads (its silver tables) and, unless it is a what-if run, writes (a
    :class:`clwl.lake.door.Lake`; default: ``config.lake``; when given, ``config.lake`` is made to name it too).
    ``whatif``: a what-if run writes everything it produces under ``<lake>/whatif/<name>/`` and never touches
    the published tables. ``senders`` / ``cluster`` narrow the replay (only in a what-if run: a part of a day
    must not replace the published day)."""

    config: PipelineConfig
    run_id: str
    profile: str = "default"
    whatif: Optional[WhatIf] = None
    senders: Optional[tuple[str, ...]] = None
    cluster: Optional[str] = None
    lake: Optional[Lake] = None
    force: bool = False  # run every date, also one whose inputs are those of its published run

    def __post_init__(self) -> None:
        if self.lake is not None:
            root = Lake.of(self.lake).root
            if root != self.config.lake:  # PipelineConfig.lake keeps naming the run's lake (absolute)
                reports = None if self.config.reports == self.config.lake / REPORTS else self.config.reports
                object.__setattr__(self, "config", replace(self.config, lake=root, reports=reports))
        object.__setattr__(self, "lake", Lake(self.config.lake))  # the run's lake, built once: handed down
        if self.senders is not None:
            object.__setattr__(self, "senders", tuple(self.senders) or None)
        if (self.senders or self.cluster) and self.whatif is None:
            raise ValueError("a run narrowed to some senders or a cluster must be a what-if run (give it a name)")

    @cached_property
    def out_lake(self) -> Lake:
        """The lake the run writes: the main lake, or the what-if run's own folder ``<lake>/whatif/<name>``."""
        return self.lake if self.whatif is None else self.lake.whatif(self.whatif.name)

    @cached_property
    def out(self) -> PipelineConfig:
        """The configuration of the lake the run writes (:attr:`out_lake`)."""
        if self.whatif is None:
            return self.config
        return replace(self.config, lake=self.out_lake.root, reports=self.out_lake.layer(REPORTS))

    def staging(self, table: str) -> str:
        """``<out>/staging/<table>``: a gold table of this run before the quality gate."""
        return str(self.out_lake.table("staging", table))

    def gold(self, table: str) -> str:
        """``<out>/gold/<table>``: where the gate publishes it."""
        return str(self.out_lake.table("gold", table))

    def reads(self, key: str) -> str:
        """An input table (``"silver.message_events"``) of the main lake: a what-if run reads the same silver."""
        layer, name = key.split(".", 1)
        return str(self.lake.table(layer, name))

    @property
    def overrides(self) -> Optional[Callable]:
        """The what-if's configuration overrides for the timelines (None: the configuration as captured)."""
        return self.whatif.apply if self.whatif is not None else None

    @property
    def options(self) -> dict:
        """What the run was asked for, as it goes into each date's inputs (clwl/lake/fingerprint.py)."""
        return {"profile": self.profile, "whatif": None if self.whatif is None else
                {"name": self.whatif.name, **self.whatif.overrides()},
                "senders": list(self.senders or ()), "cluster": self.cluster}

    @property
    def label(self) -> str:
        """How progress lines name the run's kind: ``profile default, what-if qm2-w20``."""
        return f"profile {self.profile}" + (f", what-if {self.whatif.name}" if self.whatif else "")

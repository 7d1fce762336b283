"""The one configuration object for the pipeline's Spark jobs.

Importable without pyspark (DAG files and the CLI read it), and it holds no credentials: the lake is a
path, local or mounted; nothing here talks to a service that needs a secret.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

#: The source checkout this package lives in (an editable install keeps it there).
REPO_ROOT = Path(__file__).resolve().parents[1]

_ENV = {
    "lake": "CLWL_LAKE",
    "landing": "CLWL_LANDING",
    "master": "CLWL_SPARK_MASTER",
}


def _abs(p: Path | str) -> Path:
    # Absolute paths: Spark executors, deltalake and Airflow tasks may not share the caller's cwd.
    return Path(p).expanduser().absolute()


@dataclass(frozen=True)
class PipelineConfig:
    lake: Path = field(default_factory=lambda: Path("lake"))
    landing: Path = field(default_factory=lambda: REPO_ROOT / "samples" / "landing")
    master: str = "local[2]"
    reports: Path | None = None  # None -> <lake>/reports
    shuffle_partitions: int = 4

    def __post_init__(self) -> None:
        lake = _abs(self.lake)
        object.__setattr__(self, "lake", lake)
        object.__setattr__(self, "landing", _abs(self.landing))
        object.__setattr__(self, "reports", _abs(self.reports) if self.reports is not None else lake / "reports")
        if not self.master:
            raise ValueError("master must not be empty")
        if int(self.shuffle_partitions) < 1:
            raise ValueError(f"shuffle_partitions must be >= 1, got {self.shuffle_partitions!r}")
        object.__setattr__(self, "shuffle_partitions", int(self.shuffle_partitions))

    @classmethod
    def from_env(cls, **overrides: object) -> PipelineConfig:
        """Defaults, then CLWL_LAKE / CLWL_LANDING / CLWL_SPARK_MASTER (empty = unset), then `overrides`."""
        values: dict[str, object] = {}
        for name, var in _ENV.items():
            raw = os.environ.get(var, "").strip()
            if raw:
                values[name] = raw
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # an unknown override name is a TypeError, on purpose

    def table_path(self, layer: str, table: str) -> str:
        """`<lake>/<layer>/<table>` as a string, the form both Spark and deltalake take."""
        for what, name in (("layer", layer), ("table", table)):
            if not name or name in (".", "..") or "/" in name or "\\" in name:
                raise ValueError(f"bad {what} name: {name!r}")
        return str(self.lake / layer / table)

"""What the pipeline commands need beyond ``pip install .``: checked before anything heavy is imported, so a
missing extra is one line naming what to install, not a traceback from deep inside an import."""

from __future__ import annotations

import importlib.util
from typing import Optional

PIPELINE_EXTRA = "pip install 'clwl-analytics[pipeline]'"

# Top-level modules of the `pipeline` extra (pyproject.toml) each command imports.
RUN_MODULES = ("pyspark", "delta", "deltalake", "great_expectations", "pandas", "matplotlib", "jsonschema")
INGEST_MODULES = ("pyspark", "delta", "deltalake")
QUERY_MODULES = ("datafusion", "deltalake", "pyarrow")
#: What the commands that read the lake without Spark need of the pipeline extra (the lake's own readers).
LAKE_READERS = ("deltalake", "pyarrow")


def missing_extra_reason(modules: tuple[str, ...]) -> Optional[str]:
    """None when every module can be imported, else why not and the extra to install (without the command)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    return f"needs the pipeline extra ({', '.join(missing)} not installed); install it with: {PIPELINE_EXTRA}"


def missing_extra(command: str, modules: tuple[str, ...]) -> Optional[str]:
    """None when every module can be imported, else the one line for stderr naming the extra to install."""
    reason = missing_extra_reason(modules)
    return None if reason is None else f"clwl {command}: {reason}"

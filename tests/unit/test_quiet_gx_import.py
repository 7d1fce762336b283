"""Great Expectations is quieted before it is imported: its import logs ~200 INFO lines
(great_expectations._docs_decorators), which a root logger at INFO (Airflow's task logs) prints into every
publish task's log when the level is set after the import. Checked without importing GX itself (5-15 s):
the gate's module must set the level at its own import, before anything imports GX, and GX's import keeps a
level set before it (tried: the ~200 lines drop to none)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A fresh interpreter: GX must not be imported yet. No JVM starts (pyspark is imported, not started).
SCRIPT = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s|%(message)s")
import spark.quality_gx
assert "great_expectations" not in sys.modules, "spark.quality_gx imported GX at module import"
print("LEVEL", logging.getLogger("great_expectations").getEffectiveLevel())
"""


def test_the_gate_module_quiets_gx_before_gx_is_imported():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "LEVEL 30" in proc.stdout.splitlines(), proc.stdout[-500:]  # WARNING: GX's INFO lines are dropped

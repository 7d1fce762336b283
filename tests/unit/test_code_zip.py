"""The zip of the driver's code that a cluster's executors or a Spark Connect session import (spark/session.py
code_zip) is one temporary file per driver process, removed when the process ends: nightly runs do not leave
one clwl-code-*.zip each in the temp folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_code_zip_holds_clwl_and_spark_and_is_gone_when_the_driver_ends():
    code = ("import zipfile; from spark.session import code_zip; p = code_zip(); "
            "names = zipfile.ZipFile(p).namelist(); "
            "print(p); print('clwl/__init__.py' in names and 'spark/session.py' in names)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    path, has_both = done.stdout.split()
    assert has_both == "True"
    assert not Path(path).exists(), f"{path} left behind"

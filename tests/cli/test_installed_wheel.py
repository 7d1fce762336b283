"""`pip install .` without extras, as a user outside the checkout gets it: a wheel built from the sources, installed
with --no-deps into a fresh venv (no pyspark, no deltalake). `clwl route` and `clwl generate` work; `clwl run`,
`ingest` and `query` say in one line which extra to install (exit 2); the quality gate's suites are found in the
installed package. No Spark runs here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTRA_LINE = "install it with: pip install 'clwl-analytics[pipeline]'"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin folder of a venv holding only the wheel of this checkout."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"  # a copy of what the build reads, so the build writes nothing into the checkout
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for folder in ("clwl", "spark", "expectations"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp / "dist"),
                            str(src)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp / "dist").glob("clwl_analytics-*.whl")
    venv.create(tmp / "venv", with_pip=True)
    bin_dir = tmp / "venv" / "bin"
    done = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return bin_dir


def run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CLWL_LANDING", "CLWL_LAKE")}
    return subprocess.run([str(bin_dir / args[0]), *args[1:]], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_no_pipeline_packages_in_the_venv(installed, tmp_path):
    done = run(installed, "python", "-c", "import importlib.util as u; "
               "print([m for m in ('pyspark', 'delta', 'deltalake', 'pyarrow') if u.find_spec(m)])", cwd=tmp_path)
    assert done.stdout.strip() == "[]"


def test_expectation_suites_are_found_in_the_installed_package(installed, tmp_path):
    done = run(installed, "python", "-c", "import spark.config as c; print(c.__file__); print(c.expectations_dir())",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    module, folder = (Path(line) for line in done.stdout.split())
    venv_root = installed.parent
    assert module.is_relative_to(venv_root)  # the installed package, not the checkout
    assert folder.is_relative_to(venv_root) and folder.parts[-3:] == ("share", "clwl-analytics", "expectations")
    shipped = sorted(p.name for p in folder.glob("*.json"))
    assert shipped == sorted(p.name for p in (ROOT / "expectations").glob("*.json")) and shipped
    for name in shipped:
        assert json.loads((folder / name).read_text())["name"] == name.removesuffix(".json")


def test_route_and_generate_work_without_extras(installed, tmp_path):
    captures = ROOT / "samples" / "captures" / "QM1"
    done = run(installed, "clwl", "route", "--mqsc", str(captures), "--queue", "APP.ORDERS", "--count", "3",
               "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["n"] for line in done.stdout.splitlines()] == [1, 2, 3]
    done = run(installed, "clwl", "generate", "--out", str(tmp_path / "gen"), "--days", "1",
               "--messages-per-day", "50", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "gen" / "_generate.json").is_file()


@pytest.mark.parametrize("args", [("run",), ("ingest",), ("query", "SELECT 1")])
def test_pipeline_commands_name_the_extra(installed, tmp_path, args):
    done = run(installed, "clwl", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"clwl {args[0]}: needs the pipeline extra (")
    assert lines[0].endswith(EXTRA_LINE)


def test_version_of_the_installed_package(installed, tmp_path):
    from clwl import __version__

    done = run(installed, "clwl", "--version", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"clwl {__version__}\n")


def test_the_report_templates_are_in_the_installed_package(installed, tmp_path):
    """Package data (pyproject.toml): the report's templates beside clwl/report/ in the wheel. (The report
    itself needs the pipeline extra's pandas, so it is not imported here.)"""
    done = run(installed, "python", "-c", "import importlib.util as u, pathlib; "
               "folder = pathlib.Path(u.find_spec('clwl.report').submodule_search_locations[0]) / 'templates'; "
               "print(folder); print(sorted(p.name for p in folder.glob('*.j2')))", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    folder, names = done.stdout.splitlines()
    assert Path(folder).is_relative_to(installed.parent)
    assert names == "['report.html.j2', 'summary.md.j2']"


def test_check_works_without_extras(installed, tmp_path):
    done = run(installed, "clwl", "check", str(ROOT / "samples" / "landing"), "--json", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, "")  # 1: the samples' deliberate defects would be quarantined
    summary = json.loads(done.stdout)["summary"]
    # 78 files: the two dates' captures, puts, browses, accounting, and QM5's channel agents' trace (2026-11-20)
    assert (summary["files"], summary["records_quarantined"]) == (78, 5)

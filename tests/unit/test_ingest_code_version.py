"""The ingest's code version (spark.ingest.run_log.code_version) covers every parser module: a change to any of
them reads the files again (issue 26 item 1: the hand-kept list missed clwl/parse/zos.py, so a fix to the z/OS
parser left the z/OS captures as the old code had read them)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_import_purity import _imports, _modules  # noqa: E402

from clwl.parse import parser_modules  # noqa: E402
from spark.ingest import run_log  # noqa: E402

PARSE_MODULES = sorted(m for m in _modules("clwl") if m == "clwl.parse" or m.startswith("clwl.parse."))


def test_the_code_modules_hold_every_parser_module_and_all_they_import():
    covered = set(run_log._code_modules())
    assert "clwl.parse.zos" in PARSE_MODULES  # not empty by accident
    assert set(PARSE_MODULES) <= covered
    # Closed under import: every clwl module a covered one imports (at the top or in a function) is covered.
    engine = _modules("clwl")
    missing = {m: sorted(n for n in _imports(m, engine[m]) if n in engine and n not in covered)
               for m in covered if m in engine}
    assert {m: n for m, n in missing.items() if n} == {}
    # clwl.engine.model is in only because clwl.engine.view imports it: the closure, not a list.
    assert "clwl.engine.model" in covered and "clwl.engine.model" not in parser_modules()
    assert {"clwl.engine.view", "spark.tables", "spark.ingest", "spark.ingest.parse_tasks"} <= covered


def test_parser_modules_follow_imports_inside_functions():
    # clwl.engine.view imports the runmqsc and REST parsers inside a function; what they import is in too.
    assert {"clwl.engine.view", "clwl.engine.model", "clwl.parse.mqsc", "clwl.parse.rest"} <= set(parser_modules("clwl.engine.view"))
    assert parser_modules() == tuple(sorted(parser_modules()))
    assert not any(m.startswith(("spark", "clwl.cli")) for m in parser_modules("clwl.engine.view"))


@pytest.mark.parametrize("module", PARSE_MODULES)
def test_a_change_to_any_parser_module_changes_the_code_version(module, tmp_path, monkeypatch):
    before = run_log.code_version.__wrapped__()
    loaded = importlib.import_module(module)
    changed = tmp_path / Path(loaded.__file__).name
    changed.write_bytes(Path(loaded.__file__).read_bytes() + b"\n# changed\n")
    monkeypatch.setattr(loaded, "__file__", str(changed))
    assert run_log.code_version.__wrapped__() != before
    monkeypatch.undo()
    assert run_log.code_version.__wrapped__() == before

"""The suite collects on a clean clone: pytest imports test files by their base name (rootdir import mode, no
__init__.py in tests/), so two test files of one name in different folders stop the whole run at collection
("import file mismatch"). A clean clone has no __pycache__ to hide it, so it is checked here, not found by CI."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_files_share_a_name():
    names = Counter(p.name for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)
    assert [n for n, c in names.items() if c > 1] == []

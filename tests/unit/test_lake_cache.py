"""tests/lake_cache.py: a lake a session fixture built is handed to the next session of the same code as a copy of
its own, with the paths in what the build returned naming that copy; a change of code builds afresh."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests import lake_cache


class _Cache:
    def __init__(self, root: Path):
        self.root = root

    def mkdir(self, name: str) -> Path:
        (self.root / name).mkdir(parents=True, exist_ok=True)
        return self.root / name


def _build(calls: list):
    def build(lake: Path) -> dict:
        calls.append(lake)
        (lake / "gold").mkdir(parents=True)
        (lake / "gold" / "t.txt").write_text("rows", encoding="utf-8")
        return {"report": str(lake / "reports" / "r.html"), "paths": [lake / "x"], "note": f"lake {lake} done"}
    return build


def test_the_second_session_gets_a_copy_of_its_own_with_its_paths(tmp_path, monkeypatch):
    config, calls = SimpleNamespace(cache=_Cache(tmp_path / "cache")), []
    lake1, result1, hit1 = lake_cache.kept_lake(config, "t", tmp_path / "s1", _build(calls))
    lake2, result2, hit2 = lake_cache.kept_lake(config, "t", tmp_path / "s2", _build(calls))
    assert (hit1, hit2) == (False, True) and calls == [lake1]  # built once
    assert (lake2 / "gold" / "t.txt").read_text(encoding="utf-8") == "rows" and lake2 != lake1
    assert result2 == {"report": str(lake2 / "reports" / "r.html"), "paths": [lake2 / "x"], "note": f"lake {lake2} done"}
    (lake2 / "gold" / "t.txt").write_text("changed by a test", encoding="utf-8")  # the kept lake is not this copy
    lake3, _, hit3 = lake_cache.kept_lake(config, "t", tmp_path / "s3", _build(calls))
    assert hit3 and (lake3 / "gold" / "t.txt").read_text(encoding="utf-8") == "rows"


def test_a_change_of_code_or_environment_builds_afresh(tmp_path, monkeypatch):
    config, calls = SimpleNamespace(cache=_Cache(tmp_path / "cache")), []
    lake_cache.kept_lake(config, "t", tmp_path / "s1", _build(calls))
    monkeypatch.setenv("CLWL_TRACE_TZ", "Europe/London")  # the environment decides a lake's content too
    _, _, hit = lake_cache.kept_lake(config, "t", tmp_path / "s2", _build(calls))
    assert not hit and len(calls) == 2
    monkeypatch.setattr(lake_cache, "SOURCES", (*lake_cache.SOURCES, "README.md"))  # as a change of code does
    _, _, hit = lake_cache.kept_lake(config, "t", tmp_path / "s3", _build(calls))
    assert not hit and len(calls) == 3
    assert len(list((tmp_path / "cache" / "clwl-lakes").glob("t-*"))) == 1  # the stale copies are gone


def test_without_pytests_cache_every_session_builds(tmp_path):
    calls: list = []
    for n in range(2):
        _, _, hit = lake_cache.kept_lake(SimpleNamespace(cache=None), "t", tmp_path / f"s{n}", _build(calls))
        assert not hit
    assert len(calls) == 2


def test_where_things_are_and_another_kept_lake_do_not_cost_a_rebuild(tmp_path, monkeypatch):
    """$CLWL_LAKE (the DAG tests set it while they run) and SPARK_LOCAL_IP (pyspark sets it once a session has
    started) change nothing a run writes; keeping "samples" again leaves "samples-day" kept."""
    config, calls = SimpleNamespace(cache=_Cache(tmp_path / "cache")), []
    lake_cache.kept_lake(config, "samples-day", tmp_path / "d1", _build(calls))
    lake_cache.kept_lake(config, "samples", tmp_path / "s1", _build(calls))
    monkeypatch.setenv("CLWL_LAKE", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    hits = [lake_cache.kept_lake(config, n, tmp_path / f"{n}2", _build(calls))[2] for n in ("samples", "samples-day")]
    assert hits == [True, True] and len(calls) == 2

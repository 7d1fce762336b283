"""A what-if run can never touch the published tables (issue "Safe by default"): every file it writes is under
<lake>/whatif/<name>/, the published tables keep their Delta versions, `clwl query --whatif NAME` reaches its
tables, its report is titled as a what-if and shows the published day beside it, and a what-if the day does not
know is refused with exit 2 before Spark starts. The estate is the hand-made re-allocation day, the session's
shared lake of it (tests/conftest.py ``reallocation_lake``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.handmade import DAY, reallocation_landing

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _files(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def published(reallocation_lake):
    """The session's re-allocation lake (tests/conftest.py): a what-if writes under its whatif/ folder only."""
    return reallocation_lake


def test_a_whatif_writes_only_under_its_folder_and_reaches_its_tables(published, spark, capsys):
    from clwl.cli import main as clwl_main
    from clwl.lake.published import read_published
    from clwl.lake.query import run_query

    lake = published.lake
    before, versions = _files(lake), read_published(lake / "gold").tables
    overrides = {"name": "qm3-up", "channel_state": {"TO.QM3": "RUNNING"}}
    code = clwl_main(["run", "--landing", str(published.landing), "--lake", str(lake), "--date", DAY,
                      "--what-if", json.dumps(overrides)])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    after = _files(lake)
    # The lake's lock file records who holds the lake; it is the lake's, not a result.
    changed = {f for f in after if before.get(f) != after[f] and f != "_lock"}
    assert changed and all(f.startswith("whatif/qm3-up/") for f in changed), sorted(changed)[:10]
    assert all(f in after for f in before)  # nothing removed
    assert read_published(lake / "gold").tables == versions  # the published versions did not move

    # The what-if's tables: TO.QM3 RUNNING all day, so nothing waits behind it and nothing is stuck there.
    whatif = run_query("SELECT count(*) AS n FROM routing_replay", lake / "whatif" / "qm3-up").to_pylist()
    assert whatif == [{"n": 6}]
    code = clwl_main(["query", "SELECT count(*) AS n FROM stuck_messages WHERE channel = 'TO.QM3'", "--lake",
                      str(lake), "--whatif", "qm3-up", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out.strip()) == {"n": 0}
    report = (lake / "whatif" / "qm3-up" / "reports" / DAY / "report.html").read_text(encoding="utf-8")
    assert "CLWL what-if report: qm3-up" in report and "TO.QM3" in report and "RUNNING" in report
    assert "Published day against the what-if" in report and "status published" not in report
    assert "what-if qm3-up (not published)" in report


@pytest.mark.parametrize("overrides, says", [
    ({"name": "w", "channel_attrs": {"TO.QM9": {"CLWLWGHT": 80}}}, "not in the configuration of 2026-11-20: "
                                                                   "channel TO.QM9"),
    ({"name": "w", "suspend": ["QM7"]}, "queue manager QM7"),
    ({"name": "w", "queue_attrs": {"Q9@QM2": {"PUT": "DISABLED"}}}, "queue instance Q9@QM2"),
    ({"name": "..", "suspend": ["QM2"]}, "name: out of range or not allowed"),
    ({"name": "w", "channel_attr": {"TO.QM2": {"CLWLWGHT": 80}}}, "unknown key 'channel_attr'"),
])
def test_a_whatif_the_day_does_not_know_is_refused_before_anything_runs(published, overrides, says, capsys):
    from clwl.cli import main as clwl_main

    lake = published.lake
    before = _files(lake)
    code = clwl_main(["run", "--landing", str(published.landing), "--lake", str(lake), "--date", DAY,
                      "--what-if", json.dumps(overrides)])
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert {f: v for f, v in _files(lake).items() if f != "_lock"} == {f: v for f, v in before.items()
                                                                        if f != "_lock"}


def test_a_whatif_on_a_lake_with_nothing_ingested_says_so(tmp_path, capsys):
    from clwl.cli import main as clwl_main

    landing = reallocation_landing(tmp_path / "landing")
    code = clwl_main(["run", "--landing", str(landing), "--lake", str(tmp_path / "lake"), "--date", DAY,
                      "--what-if", '{"name": "w"}'])
    err = capsys.readouterr().err
    assert code == 2 and "nothing ingested" in err, err

"""The OpenLineage events of a stage (clwl/lake/lineage.py, clwl/lake/lineage_stages.py) over a hand-built run
outcome and a small real Delta lake written with deltalake: no Spark. The samples run's file:
tests/spark/test_lineage_samples.py."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from clwl.lake.door import Lake
from clwl.lake.lineage import assertions_facet, dataset_name, folder_input
from clwl.lake.lineage_stages import lineage_file, run_lineage, stage_lineage

# A suite's validation result as kept under <lake>/validation/<run_id>/ (spark/publish.py): Great Expectations'
# results, then the cross-table checks.
RESULT = {
    "success": False,
    "results": [
        {"success": True, "expectation_config": {"type": "expect_column_values_to_not_be_null",
                                                 "kwargs": {"column": "msg_id"}, "severity": "critical"}},
        {"success": False, "expectation_config": {"type": "expect_compound_columns_to_be_unique",
                                                  "kwargs": {"column_list": ["sending_qmgr", "msg_id"]}}},
    ],
    "extra_checks": [{"check": "run_date_is_the_run_date", "column": "run_date", "success": True,
                      "description": "every row has run_date = 2026-11-20"}],
}


def _events(lake: Lake, run_id: str) -> list[dict]:
    return [json.loads(line) for line in lineage_file(lake, run_id).read_text().splitlines()]


def _write(lake: Lake, key: str, n: int) -> None:
    write_deltalake(str(lake.table(key)), pa.table({"run_date": ["2026-11-20"] * n, "x": list(range(n))}),
                    mode="append")


def test_assertions_are_one_per_expectation_and_check_with_its_success():
    # RESULT holds 2 expectations and 1 cross-table check: 3 assertions, in that order; the compound key's
    # columns joined as its column; the failed one (success False) stays failed.
    facet = assertions_facet(RESULT)
    got = [(a.assertion, a.column, a.success) for a in facet.assertions]
    assert got == [("expect_column_values_to_not_be_null", "msg_id", True),
                   ("expect_compound_columns_to_be_unique", "sending_qmgr, msg_id", False),
                   ("run_date_is_the_run_date", "run_date", True)]


def test_landing_folder_is_named_by_path_with_its_file_count_and_digest(tmp_path):
    # Two listings of the same files in another order have one digest; a file's size changing changes it.
    a = folder_input(tmp_path / "2026-11-20", [("qm1/a.mqsc", 10), ("qm2/b.csv", 20)])
    b = folder_input(tmp_path / "2026-11-20", [("qm2/b.csv", 20), ("qm1/a.mqsc", 10)])
    c = folder_input(tmp_path / "2026-11-20", [("qm2/b.csv", 21), ("qm1/a.mqsc", 10)])
    assert (a.namespace, a.name) == ("file", str((tmp_path / "2026-11-20").absolute()))
    assert a.facets["clwlLanding"].fileCount == 2
    assert a.facets["clwlLanding"].digest == b.facets["clwlLanding"].digest != c.facets["clwlLanding"].digest


def test_publish_stage_events_carry_versions_assertions_and_the_verdict(tmp_path):
    from spark.publish import PublishOutcome
    from spark.quality import ValidationOutcome

    lake = Lake(tmp_path / "lake")
    _write(lake, "staging.stuck_messages", 2)  # version 0: what the gate validates
    _write(lake, "gold.stuck_messages", 1)  # version 0: the previous publish
    with run_lineage(lake, "run-1"):
        with stage_lineage("publish", "run-1", "2026-11-20", reads=lake, writes=lake,
                           read_keys=("staging.stuck_messages",)) as stage:
            _write(lake, "gold.stuck_messages", 2)  # version 1: this publish
            stage.result = PublishOutcome(
                published=True, failures=[], result_path=lake.layer("validation") / "run-1",
                table_versions={"gold.stuck_messages": 1},
                outcomes=[ValidationOutcome("gold.stuck_messages", True, [], RESULT)])
    events = _events(lake, "run-1")
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("clwl.run", "START"), ("clwl.publish", "START"), ("clwl.publish", "COMPLETE"), ("clwl.run", "COMPLETE")]
    start, complete = events[1], events[2]
    assert start["run"]["runId"] == complete["run"]["runId"]
    assert complete["run"]["facets"]["parent"]["run"]["runId"] == events[0]["run"]["runId"]
    staged = dataset_name(lake.table("staging.stuck_messages"))[1]
    assert [(i["name"], i["facets"]["version"]["datasetVersion"]) for i in start["inputs"]] == [(staged, "0")]
    # Only the table whose version moved is an output, at the version written.
    [out] = complete["outputs"]
    assert out["name"] == dataset_name(lake.table("gold.stuck_messages"))[1]
    assert out["facets"]["version"]["datasetVersion"] == "1"
    assert len(out["facets"]["dataQualityAssertions"]["assertions"]) == 3  # 2 expectations + 1 check
    [staged_in] = complete["inputs"]
    assert len(staged_in["inputFacets"]["dataQualityAssertions"]["assertions"]) == 3
    gate = complete["run"]["facets"]["clwlGate"]
    assert (gate["published"], gate["runDate"], gate["failures"]) == (True, "2026-11-20", [])


def test_a_failing_stage_emits_fail_and_raises_its_own_error(tmp_path):
    lake = Lake(tmp_path / "lake")
    with pytest.raises(ZeroDivisionError):
        with run_lineage(lake, "run-2"):
            with stage_lineage("detect", "run-2", "2026-11-20", reads=lake, writes=lake):
                raise ZeroDivisionError("division by zero")
    events = _events(lake, "run-2")
    assert [(e["job"]["name"], e["eventType"]) for e in events][-2:] == [("clwl.detect", "FAIL"),
                                                                         ("clwl.run", "FAIL")]
    assert events[-2]["run"]["facets"]["errorMessage"]["message"].startswith("ZeroDivisionError")


def test_a_run_with_no_stage_writes_no_file_and_a_lineage_failure_never_fails_a_stage(tmp_path, caplog):
    lake = Lake(tmp_path / "lake")
    with run_lineage(lake, "run-3"):
        pass  # nothing to do (every date unchanged): no events, no file
    assert not lineage_file(lake, "run-3").exists()
    Path(lake.root).mkdir(parents=True)
    (Path(lake.root) / "lineage").write_text("a file where the folder goes")  # every write of an event fails
    with caplog.at_level(logging.WARNING, logger="clwl.lake.lineage_stages"):
        with stage_lineage("report", "run-4", "2026-11-20", reads=lake, writes=lake) as stage:
            stage.result = "done"
    assert stage.result == "done"
    assert any("lineage: could not emit" in r.getMessage() for r in caplog.records)

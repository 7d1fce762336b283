"""The Data Docs builder's bad input (clwl/report/quality_docs.py): a kept result that is not one is one line naming
the file, and a report is written without Data Docs, saying why, when its run kept none. No GX import: the checks
come before it."""

from __future__ import annotations

import datetime as dt

import pytest

from clwl.report.build import quality_docs
from clwl.report.quality_docs import QualityDocsError, build_quality_docs, kept_results, validation_folder

DAY = dt.date(2026, 11, 20)


def test_a_kept_file_that_is_not_a_result_is_named_in_one_line(tmp_path):
    (tmp_path / "_publish.json").write_text("{}")  # the verdict: not a suite's result, left out
    assert kept_results(tmp_path) == []
    (tmp_path / "distribution.json").write_text("{not json")
    with pytest.raises(QualityDocsError, match=r"distribution\.json: not a readable validation result") as e:
        kept_results(tmp_path)
    assert "\n" not in str(e.value)
    (tmp_path / "distribution.json").write_text('{"table": "gold.distribution"}')
    with pytest.raises(QualityDocsError, match=r"distribution\.json: not a validation result \(no 'results' list\)"):
        build_quality_docs(tmp_path, tmp_path / "site", "run-1", DAY.isoformat())


def test_a_second_date_of_a_run_is_read_from_its_own_folder(tmp_path):
    (tmp_path / "run-1").mkdir()
    assert validation_folder(tmp_path, "run-1", "2026-11-20") == tmp_path / "run-1"
    (tmp_path / "run-1" / "2026-11-20").mkdir()
    (tmp_path / "run-1" / "2026-11-20" / "run_summary.json").write_text('{"results": []}')
    assert validation_folder(tmp_path, "run-1", "2026-11-20") == tmp_path / "run-1" / "2026-11-20"
    assert [k.suite for k in kept_results(tmp_path / "run-1")] == []  # the other date's results are not the first's


def test_a_report_whose_run_kept_no_results_says_so_and_links_nothing(tmp_path):
    (tmp_path / "report" / "quality").mkdir(parents=True)  # an earlier run's site: not this report's
    link, note = quality_docs(tmp_path / "validation", "run-1", DAY, tmp_path / "report")
    assert link == ""
    assert note.startswith("The quality gate's Data Docs were not built: ")
    assert "no validation result" in note
    assert not (tmp_path / "report" / "quality").exists()

"""The quality gate's results as a site (issue 43 item 2): Great Expectations Data Docs per date, built from the
results the run kept (clwl/report/quality_docs.py), no new pipeline run here.

Which suites a date's Data Docs must list: publish validates every gold table with its suite and the silver tables
that feed them with theirs (spark/publish.py, docstring), one suite a file in expectations/ (spark/quality.py:
``<layer>.<table>.json``), so every file there, once per date: gold.distribution, gold.routing_replay,
gold.run_summary, gold.stuck_messages, silver.config_history, silver.message_events, silver.quarantine.

The blocked day (tests/spark/test_blocked_run_cli.py, docstring): QM2 puts QM1's msg(2) again, so msg_id is not
unique in silver.message_events (expect_column_values_to_be_unique msg_id) nor (run_date, msg_id) in
gold.routing_replay; those two suites fail, and msg(2) is the unexpected value each must show.

The sites read here were written by the fixtures' own runs (the samples lake's reports, the blocked run's
``quality-blocked/``); one is built again from the kept JSON (build_quality_docs) to check the builder itself.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from spark.config import REPO_ROOT
from tests.handmade import DAY as BLOCKED_DAY
from tests.handmade import msg

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SUITES = {p.stem for p in (REPO_ROOT / "expectations").glob("*.json")}
FAILING = {"silver.message_events", "gold.routing_replay"}
SAMPLE_DATES = ("2026-11-19", "2026-11-20")

# GX's index page carries its table rows as data in a script: one row a validation result, then one a suite.
_VALIDATION_ROW = re.compile(r"'_expectation_suite_name_sort': '(?P<suite>[^']+)', '_table_row_link_path': "
                             r"'(?P<link>validations/[^']+)', '_validation_success_text': '(?P<status>\w+)'")
_SUITE_PAGE = re.compile(r"'_table_row_link_path': 'expectations/(\w+)/(\w+)\.html'")


def site_index(index: Path) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """The index's validation results (suite -> (page, Success/Failed)) and the suites it lists."""
    text = index.read_text(encoding="utf-8")
    rows = {m["suite"]: (m["link"], m["status"]) for m in _VALIDATION_ROW.finditer(text)}
    return rows, {f"{layer}.{table}" for layer, table in _SUITE_PAGE.findall(text)}


def page_text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))


def test_every_published_date_has_data_docs_of_every_suite_linked_from_its_run_summary(samples_lake, tmp_path):
    from clwl.cli import main

    assert len(SUITES) == 9  # three silver and six gold suites (expectations/*.json)
    for date in SAMPLE_DATES:
        folder = samples_lake.lake / "reports" / date
        rows, suites = site_index(folder / "quality" / "index.html")
        assert suites == SUITES and set(rows) == SUITES, date
        run_id = json.loads((folder / "_report.json").read_text())["run_id"]
        for suite, (link, status) in rows.items():
            assert status == "Success", (date, suite)  # a published date passed every suite
            assert f"/{run_id}/" in link  # the report's own run, not another's
            assert (folder / "quality" / link).is_file()
        assert '<a href="quality/index.html">' in (folder / "report.html").read_text(encoding="utf-8")
        assert "](quality/index.html)" in (folder / "summary.md").read_text(encoding="utf-8")
    # `clwl report --out` brings the site along with the report.
    assert main(["report", "--lake", str(samples_lake.lake), "--date", SAMPLE_DATES[0], "--out", str(tmp_path)]) == 0
    assert site_index(tmp_path / "quality" / "index.html")[1] == SUITES


def test_a_blocked_date_s_data_docs_show_the_failing_expectation_with_its_unexpected_value(blocked_day_runs, tmp_path):
    from clwl.report.quality_docs import build_quality_docs

    lake = blocked_day_runs.lake
    index = lake / "reports" / BLOCKED_DAY / "quality-blocked" / "index.html"
    assert blocked_day_runs.first.returncode == 4
    assert f"Data Docs): {index}" in blocked_day_runs.first.stdout  # the run says where they are
    assert not (lake / "reports" / BLOCKED_DAY / "report.html").exists()  # nothing published: no report
    (run_folder,) = (lake / "validation").iterdir()
    rebuilt = build_quality_docs(run_folder, tmp_path / "site", run_folder.name, BLOCKED_DAY)
    for site in (index, rebuilt):
        rows, suites = site_index(site)
        assert suites == SUITES and set(rows) == SUITES
        assert {s for s, (_, status) in rows.items() if status == "Failed"} == FAILING
        for suite in FAILING:
            text = page_text(site.parent / rows[suite][0])
            assert "unique" in text and "msg_id" in text, suite  # the failing expectation
            assert msg(2) in text, suite  # its unexpected value: the MsgId put twice
        assert msg(2) not in page_text(site.parent / rows["gold.stuck_messages"][0])

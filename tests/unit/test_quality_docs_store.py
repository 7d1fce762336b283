"""The Data Docs of a run on an object-store lake (clwl/report/quality_docs.py, spark.stages.blocked_quality_docs):
the kept results read from ``s3://.../validation/<run_id>/``, the site put under ``<reports>/<date>/quality-blocked/``
on the store. No JVM (importing spark.pipeline starts none); the session's S3-compatible server.

The kept result is written here as the gate writes one (spark/quality.py ``result_json``: GX's results under
``results``): gold.distribution's p_value must lie within 0 and 1 (expectations/gold.distribution.json); the two
rows 1.5 and -0.25 break it, so the page must show them as its unexpected values, and the run's line names
the index on the store.
"""

from __future__ import annotations

import json
import re

import pytest

pytestmark = [pytest.mark.objectstore]

DAY = "2026-11-20"
RUN = "run-20261120T010000-0123abcd"
KEPT = {
    "table": "gold.distribution", "success": False,
    "failed": ["expect_column_values_to_be_between p_value: 2 unexpected of 3"],
    "validated_at": "2026-11-20T01:02:03+00:00",
    "statistics": {"evaluated_expectations": 1, "successful_expectations": 0, "unsuccessful_expectations": 1,
                   "success_percent": 0.0},
    "results": [{
        "success": False,
        "expectation_config": {"type": "expect_column_values_to_be_between",
                               "kwargs": {"column": "p_value", "min_value": 0.0, "max_value": 1.0}, "meta": {}},
        "result": {"element_count": 3, "unexpected_count": 2, "unexpected_percent": 66.7,
                   "partial_unexpected_list": [1.5, -0.25], "missing_count": 0, "missing_percent": 0.0},
        "meta": {}, "exception_info": {"raised_exception": False}}],
    "extra_checks": [],
}


def test_a_blocked_runs_data_docs_are_read_from_and_put_on_the_store(object_store, monkeypatch, tmp_path):
    from clwl.lake.storage import get_file, list_prefix, put_object
    from spark.config import PipelineConfig
    from spark.run import PipelineRun
    from spark.stages import blocked_quality_docs

    object_store.use(monkeypatch)
    config = PipelineConfig(lake=object_store.lake_uri())
    validation = config.lake / "validation" / RUN
    put_object(validation / "distribution.json", json.dumps(KEPT).encode())
    put_object(validation / "_publish.json", json.dumps({"run_id": RUN, "run_date": DAY}).encode())

    line = blocked_quality_docs(PipelineRun(config, RUN), DAY, validation)
    site = config.reports / DAY / "quality-blocked"
    assert line == f"the gate's results (Great Expectations Data Docs): {site / 'index.html'}"
    names = {name for name, _ in list_prefix(site)}
    (page,) = [n for n in names if n.startswith("validations/gold/distribution/")]
    assert {"index.html", "expectations/gold/distribution.html"} <= names
    get_file(site / page, tmp_path / "page.html")
    text = re.sub(r"<[^>]+>", " ", (tmp_path / "page.html").read_text(encoding="utf-8"))
    assert "p_value" in text and "1.5" in text and "-0.25" in text
    # The next blocked run's site replaces it: one result page, that run's.
    put_object(config.lake / "validation" / "run-2" / "distribution.json", json.dumps(KEPT).encode())
    blocked_quality_docs(PipelineRun(config, "run-2"), DAY, config.lake / "validation" / "run-2")
    pages = [n for n, _ in list_prefix(site) if n.startswith("validations/")]
    assert len(pages) == 1 and "/run-2/" in pages[0], pages

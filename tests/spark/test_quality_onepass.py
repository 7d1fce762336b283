"""A suite's unexpected_rows_expectations answered in one aggregate (spark/quality_gx.py, issue 45 lever 2): the
same results as Great Expectations' own Spark implementation, in every result format, with fewer Spark jobs."""

from __future__ import annotations

import json
import uuid

import pytest

pytestmark = pytest.mark.spark

ROWS = [  # (k, a, b)
    (1, 1, 10),
    (2, 5, 3),
    (3, 7, 2),
    (4, None, 4),
]
OK = "SELECT * FROM {batch} WHERE a > 100"  # no row
BAD = "SELECT * FROM {batch} WHERE a > b"  # k 2 and 3: a null never compares
NOT_A_CONDITION = "SELECT k, b FROM {batch} WHERE b < 4 ORDER BY k"  # k 2 and 3; not a bare condition
BROKEN = "SELECT * FROM {batch} WHERE no_such_column = 1"


def _suite(*queries: str) -> dict:
    return {"name": "test.onepass", "meta": {},
            "expectations": [{"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "k"}}]
            + [{"type": "unexpected_rows_expectation", "kwargs": {"unexpected_rows_query": q}} for q in queries]}


def _results(out: dict) -> list[tuple]:
    return [(r["expectation_config"]["kwargs"].get("unexpected_rows_query"), r["success"],
             json.dumps(r.get("result"), sort_keys=True, default=str),
             # GX 1.x keys a failed metric's exception_info by the metric
             '"raised_exception": true' in json.dumps(r.get("exception_info"), sort_keys=True))
            for r in out["results"]]


def _jobs(spark, run) -> tuple[object, int]:
    group = f"onepass-{uuid.uuid4().hex}"  # a group of its own: the tracker counts a group's jobs cumulatively
    spark.sparkContext.setJobGroup(group, group)
    try:
        out = run()
    finally:
        spark.sparkContext.setJobGroup("", "")
    return out, len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


@pytest.fixture
def frame(spark):
    return spark.createDataFrame(ROWS, "k int, a int, b int")  # no size estimate: GX's Spark engine


@pytest.mark.parametrize("fmt", ["BOOLEAN_ONLY", "SUMMARY", "COMPLETE"])
def test_same_results_as_gx_spark_engine(spark, frame, monkeypatch, fmt):
    """Expected from ROWS: OK returns no row (success, observed 0); BAD returns k 2 (5 > 3) and k 3 (7 > 2), k 4's
    null a compares to nothing (observed 2); NOT_A_CONDITION, counted by the union path, returns k 2 (b 3) and
    k 3 (b 2) (observed 2). In COMPLETE the rows themselves are in details: the same ones either way. BROKEN
    raises in both, for itself only."""
    from spark import quality_gx

    suite = _suite(OK, BAD, NOT_A_CONDITION, BROKEN)
    ours = quality_gx.gx_validate(frame, suite, {"result_format": fmt})
    monkeypatch.setattr(quality_gx, "_SparkQueries", lambda df, queries: None)  # GX's own Spark metrics
    theirs = quality_gx.gx_validate(frame, suite, {"result_format": fmt})
    assert _results(ours) == _results(theirs)
    by_query = {q: (ok, res, raised) for q, ok, res, raised in _results(ours)}
    assert by_query[OK][:2] == (True, {"BOOLEAN_ONLY": "{}", "SUMMARY": '{"observed_value": 0}', "COMPLETE":
                                       '{"details": {"unexpected_rows": []}, "observed_value": 0}'}[fmt])
    assert by_query[BAD][0] is False and by_query[NOT_A_CONDITION][0] is False
    assert by_query[BROKEN][2] is True and by_query[None][0] is True and by_query[None][2] is False
    if fmt != "BOOLEAN_ONLY":
        assert json.loads(by_query[BAD][1])["observed_value"] == 2
        assert json.loads(by_query[NOT_A_CONDITION][1])["observed_value"] == 2
    if fmt == "COMPLETE":
        assert sorted(r["k"] for r in json.loads(by_query[BAD][1])["details"]["unexpected_rows"]) == [2, 3]


def test_one_aggregate_for_the_counts_and_rows_only_when_there_are_some(spark, frame, monkeypatch):
    """Jobs, on local[2] without adaptive execution (spark.session.session_settings turns it off): a global
    count or aggregate is 1 job, and `limit(200).collect()` of fewer rows than 200 over the frame's 2 partitions
    is 2 (Spark takes one partition, then the rest). GX's own Spark metrics run, per
    unexpected_rows_expectation, the count (1) and the rows (2, even when there are none): 3 passing queries are
    9 jobs. Ours: one aggregate for the 3 counts (1) and no row fetch (every count is 0): 8 fewer. Adding BAD
    (2 rows) to a suite run with SUMMARY: GX 3 more jobs (its count and its rows); ours 2 more (its rows; its
    count is in the same aggregate)."""
    from spark import quality_gx

    passing = _suite(OK, OK.replace("100", "200"), OK.replace("100", "300"))
    failing = _suite(OK, OK.replace("100", "200"), OK.replace("100", "300"), BAD)
    boolean, summary = {"result_format": "BOOLEAN_ONLY"}, {"result_format": "SUMMARY"}
    quality_gx.gx_validate(frame, passing, boolean)  # GX's context made, untimed
    jobs = {}
    for who in ("ours", "theirs"):
        if who == "theirs":
            monkeypatch.setattr(quality_gx, "_SparkQueries", lambda df, queries: None)  # GX's own Spark metrics
        for name, suite, fmt in (("passing", passing, boolean), ("passing summary", passing, summary),
                                 ("failing summary", failing, summary)):
            jobs[who, name] = _jobs(spark, lambda: quality_gx.gx_validate(frame, suite, fmt))[1]
    assert jobs["theirs", "passing"] - jobs["ours", "passing"] == 8
    assert jobs["ours", "failing summary"] - jobs["ours", "passing summary"] == 2
    assert jobs["theirs", "failing summary"] - jobs["theirs", "passing summary"] == 3

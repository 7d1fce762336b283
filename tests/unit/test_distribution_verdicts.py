"""The distribution verdicts (clwl/analyses/distribution.py), pure: no Spark.

Expected values are derived by hand from the definitions, as written beside each case."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest

from clwl.analyses.distribution import ALPHA, MIN_GROUP, chi_square_sf, explain, judge_count, judge_group

T0 = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
T1 = datetime(2026, 11, 20, 11, tzinfo=timezone.utc)


@pytest.mark.parametrize("x", [0.5, 2.0, 7.3, 30.0])
def test_chi_square_with_two_degrees_of_freedom_is_an_exponential(x):
    # Chi-square with 2 dof is Exp(1/2): P(X > x) = e^(-x/2).
    assert chi_square_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-9)


@pytest.mark.parametrize("x", [1.0, 4.0, 9.49, 20.0])
def test_chi_square_with_four_degrees_of_freedom(x):
    # 4 dof (Erlang, shape 2, rate 1/2): P(X > x) = e^(-x/2) (1 + x/2).
    assert chi_square_sf(x, 4) == pytest.approx(math.exp(-x / 2) * (1 + x / 2), rel=1e-9)


def test_chi_square_critical_values():
    # The tabulated 5% and 1% points of chi-square(1) are 3.841459 and 6.634897 (1.959964^2, 2.575829^2).
    assert chi_square_sf(3.841459, 1) == pytest.approx(0.05, rel=1e-5)
    assert chi_square_sf(6.634897, 1) == pytest.approx(0.01, rel=1e-5)
    assert chi_square_sf(0.0, 3) == 1.0 and chi_square_sf(5.0, 0) == 1.0


def test_a_group_that_matches_its_expectation_is_expected():
    # chi = 0, so p = P(X > 0) = 1: nothing is unexpected.
    p, verdicts = judge_group({"QM2": 50.0, "QM3": 50.0}, {"QM2": 50, "QM3": 50})
    assert p == 1.0 and verdicts == {"QM2": "expected", "QM3": "expected"}


def test_a_skewed_group_is_unexpected_on_both_sides():
    # Expected 50/50, observed 80/20: chi = 30^2/50 + 30^2/50 = 36 with 1 dof; p = erfc(6/sqrt(2)) ~ 2e-9 < ALPHA,
    # and each residual is 30/sqrt(50) = 4.24 > 2: both destinations are the odd ones out.
    p, verdicts = judge_group({"QM2": 50.0, "QM3": 50.0}, {"QM2": 80, "QM3": 20})
    assert p == pytest.approx(math.erfc(6 / math.sqrt(2)), rel=1e-6) and p < ALPHA
    assert verdicts == {"QM2": "unexpected", "QM3": "unexpected"}


def test_shares_are_compared_not_totals():
    # The expected counts are scaled to the observed total (accounting can lose records): 100/100 expected
    # against 30/30 observed is the same 50/50 share, so p = 1.
    p, verdicts = judge_group({"QM2": 100.0, "QM3": 100.0}, {"QM2": 30, "QM3": 30})
    assert p == 1.0 and set(verdicts.values()) == {"expected"}


def test_a_small_group_is_insufficient_data():
    # Fewer than MIN_GROUP observations: no test.
    n = MIN_GROUP - 1
    p, verdicts = judge_group({"QM2": n / 2, "QM3": n / 2}, {"QM2": n, "QM3": 0})
    assert p is None and set(verdicts.values()) == {"insufficient data"}


def test_a_destination_the_replay_never_chose_is_unexpected():
    # Expected 0 messages for QM4 but some arrived there: p = 0 and QM4 alone is unexpected.
    p, verdicts = judge_group({"QM2": 40.0, "QM3": 40.0}, {"QM2": 38, "QM3": 37, "QM4": 5})
    assert p == 0.0 and verdicts == {"QM2": "expected", "QM3": "expected", "QM4": "unexpected"}


def test_one_receiver_count():
    # Exact prediction: |o - e| - 0.5 continuity correction over sqrt(e); 100 vs 100 -> z = 0, p = 1.
    assert judge_count(100.0, 100) == (1.0, "expected")
    # 150 vs 100: z = 49.5 / 10 = 4.95, p = erfc(4.95 / sqrt 2) ~ 7e-7.
    p, verdict = judge_count(100.0, 150)
    assert p == pytest.approx(math.erfc(4.95 / math.sqrt(2)), rel=1e-9) and verdict == "unexpected"
    assert judge_count(3.0, 4) == (None, "insufficient data")


def test_explanations_without_configuration():
    assert explain([], "APP.Q", "QM2", T0, T1, "insufficient data", 0.0, 3) == "too few messages to test (3 observed)"
    assert explain([], "APP.Q", "QM2", T0, T1, "unexpected", 50.0, 80) == (
        "observed 80 against 50.0 expected; no configuration change or channel event explains it")
    assert explain([], "APP.Q", "QM2", T0, T1, "expected", 50.0, 50) == "as the configuration predicts"

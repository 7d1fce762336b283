"""One run date value (clwl.days.RunDate): the landing's folders, the command line and the DAGs' params validate
a run date the same way, and every conversion to a date goes through it."""

from __future__ import annotations

import argparse
from datetime import date, datetime, timezone

import pytest

from clwl.cli.argtypes import run_date
from clwl.days import RunDate, RunDateOutOfRange, day_bounds, run_day
from clwl.landing.layout import is_run_date

BAD = ["20261120", "2026-W47-5", "2026-02-30", "2026-11-20\n", "2026-11-2", " 2026-11-20",
       "\u0662\u0660\u0662\u0666-11-20", "2026-11-20T00:00", ""]


def test_a_run_date_is_its_text_and_its_day():
    d = RunDate("2026-11-20")
    assert d == "2026-11-20" and isinstance(d, str) and d.day == date(2026, 11, 20)
    assert d.bounds == (datetime(2026, 11, 20, tzinfo=timezone.utc), datetime(2026, 11, 21, tzinfo=timezone.utc))
    assert RunDate(date(2026, 11, 20)) == d and RunDate(d) is d
    assert run_day("2026-11-20") == run_day(date(2026, 11, 20)) == run_day(datetime(2026, 11, 20, 13)) == d.day


@pytest.mark.parametrize("text", BAD, ids=repr)
def test_every_validator_refuses_the_same_texts(text):
    with pytest.raises(ValueError, match="is not a run date YYYY-MM-DD"):
        RunDate(text)
    assert not is_run_date(text)
    with pytest.raises(argparse.ArgumentTypeError, match="is not a date YYYY-MM-DD"):
        run_date(text)


def test_the_command_line_gives_a_run_date():
    assert isinstance(run_date("2026-11-20"), RunDate)


@pytest.mark.parametrize("text", ["0001-01-01", "9999-12-31"])
def test_the_first_and_last_days_python_has_are_not_run_dates(text):
    """Issue 40 item 3: the end of 9999-12-31 (day_bounds, the silver timelines, blast) and the day before
    0001-01-01 (drift's baseline) overflowed, a traceback out of clwl drift and clwl blast. Refused where every
    run date is validated, in one sentence naming the range."""
    says = r"out of range: run dates go from 0001-01-02 to 9999-12-30"
    with pytest.raises(RunDateOutOfRange, match=says):
        RunDate(text)
    assert not is_run_date(text)
    with pytest.raises(argparse.ArgumentTypeError, match=says):
        run_date(text)
    with pytest.raises(RunDateOutOfRange, match=says):
        day_bounds(text)


def test_the_first_and_last_run_dates_have_a_day_and_a_day_before():
    from clwl.analyses.drift import window

    assert day_bounds("9999-12-30")[1] == datetime(9999, 12, 31, tzinfo=timezone.utc)
    assert window("9999-12-30")[0] == "9999-12-29"
    # drift's baseline before the first run date is a date, not a run date: its end is the first run date's start
    assert window("0001-01-02") == ("0001-01-01", datetime(1, 1, 2, tzinfo=timezone.utc),
                                    datetime(1, 1, 3, tzinfo=timezone.utc))
    with pytest.raises(RunDateOutOfRange):  # a date given as a date has no end past 9999-12-31 either
        day_bounds(date.max)

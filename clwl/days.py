"""Run dates and UTC instants: a run date is the UTC day [00:00, 24:00) of the landing folder's date."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

UTC = timezone.utc
#: A run date's text: YYYY-MM-DD (date.fromisoformat alone also takes 20261120 and 2026-W47-5). ``\Z``, not ``$``:
#: ``$`` also matches before a trailing newline. ASCII digits only (``\d`` takes any script's).
RUN_DATE_NAME = re.compile(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
#: The first and last run dates: Python's dates end at 0001-01-01 and 9999-12-31, and a run date's day needs the
#: day after it (its end: day_bounds) and the day before it (clwl drift's baseline, the previous run date).
FIRST_RUN_DATE, LAST_RUN_DATE = date(1, 1, 2), date(9999, 12, 30)


class RunDateOutOfRange(ValueError):
    """A real date outside FIRST_RUN_DATE..LAST_RUN_DATE: its day bounds or windows would overflow."""


def _out_of_range(text: str) -> RunDateOutOfRange:
    return RunDateOutOfRange(f"{text} is out of range: run dates go from {FIRST_RUN_DATE} to {LAST_RUN_DATE} (the "
                             f"day before and the day after one must be dates too)")


class RunDate(str):
    """A run date: the text ``YYYY-MM-DD`` that names a landing folder and partitions every table, and the UTC day
    it stands for. The one validation of a run date (the landing's folders, the command line, the DAGs' params):
    ``RunDate(text)`` or ValueError naming the text. A ``str``, so it goes wherever the text went (folder names,
    SQL, JSON); ``.day`` is the ``date``, ``.bounds`` the UTC day. ``RunDate(a_date)`` works too."""

    __slots__ = ()

    def __new__(cls, value: "str | date") -> "RunDate":
        if isinstance(value, RunDate):
            return value
        text = value.isoformat() if isinstance(value, date) and not isinstance(value, datetime) else str(value)
        if not RUN_DATE_NAME.fullmatch(text):
            raise ValueError(f"{text!r} is not a run date YYYY-MM-DD")
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a run date YYYY-MM-DD (no such day)") from None
        if not FIRST_RUN_DATE <= day <= LAST_RUN_DATE:
            raise _out_of_range(text)
        return super().__new__(cls, text)

    @property
    def day(self) -> date:
        return date.fromisoformat(self)

    @property
    def bounds(self) -> tuple[datetime, datetime]:
        return day_bounds(self.day)


def run_day(value: "str | date | datetime") -> date:
    """The ``date`` of a run date given as text, a date or a datetime (its date): the one conversion."""
    if isinstance(value, datetime):
        return value.date()
    return RunDate(value).day


def as_utc(t: datetime | None) -> datetime | None:
    """``t`` as an aware UTC datetime; a naive one is read as UTC (the lake's timestamps are UTC)."""
    if t is None:
        return None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def day_bounds(run_date: str | date) -> tuple[datetime, datetime]:
    """[start, end) of the run date in UTC."""
    d = RunDate(run_date).day if isinstance(run_date, str) else run_date
    if d == date.max:  # (a date, not a run date, may be the day before the first one: clwl drift's baseline)
        raise _out_of_range(d.isoformat())
    start = datetime.combine(d, time(0), UTC)
    return start, start + timedelta(days=1)

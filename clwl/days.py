"""Run dates and UTC instants: a run date is the UTC day [00:00, 24:00) of the landing folder's date."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

UTC = timezone.utc


def as_utc(t: datetime | None) -> datetime | None:
    """``t`` as an aware UTC datetime; a naive one is read as UTC (the lake's timestamps are UTC)."""
    if t is None:
        return None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def day_bounds(run_date: str | date) -> tuple[datetime, datetime]:
    """[start, end) of the run date in UTC."""
    d = date.fromisoformat(run_date) if isinstance(run_date, str) else run_date
    start = datetime.combine(d, time(0), UTC)
    return start, start + timedelta(days=1)

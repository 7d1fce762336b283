"""argparse types shared by the ``clwl`` commands (nothing of the engine: ``clwl generate`` stays free of it)."""

from __future__ import annotations

import argparse
from datetime import date

from clwl.days import RunDate, RunDateOutOfRange


def whole_number(lowest: int):
    """An argparse type: a whole number of at least ``lowest``."""

    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit()):  # int() also takes '١٠', '1_0' and ' 10'
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
        n = int(text)
        if n < lowest:
            raise argparse.ArgumentTypeError(f"{n} must be at least {lowest}")
        return n

    return parse


def run_date(text: str) -> str:
    """An argparse type: a run date written exactly ``YYYY-MM-DD``, kept as text (it names a landing folder)."""
    try:
        return RunDate(text)
    except RunDateOutOfRange as e:  # a real date, but one whose day or day before is not
        raise argparse.ArgumentTypeError(str(e)) from None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


def iso_date(text: str) -> date:
    """An argparse type: an ISO date, as a ``date``."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


def capture_moment(text: str):
    """An argparse type: ``--at``, the moment whose latest captures a landing queue manager folder gives
    (clwl.engine.view.parse_capture_moment: HH:MM[:SS] UTC on the folder's date, or YYYY-MM-DDTHH:MM[:SS])."""
    from clwl.engine.view import parse_capture_moment  # here, not above: clwl generate loads none of the engine

    try:
        return parse_capture_moment(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive_number(text: str) -> float:
    """An argparse type: a finite number above 0 (``3``, ``2.5``)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number above 0")
    return value

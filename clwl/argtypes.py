"""argparse types shared by the `clwl` commands (kept apart so `clwl generate` imports nothing of the engine)."""

from __future__ import annotations

import argparse


def whole_number(lowest: int):
    """An argparse type: a whole number of at least ``lowest``."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if n < lowest:
            raise argparse.ArgumentTypeError(f"{n} must be at least {lowest}")
        return n

    return parse

"""The README's first command, `clwl run` on the bundled samples into a fresh lake, over every sample date.

The other pipeline tests run one date each; this one runs what a new user runs. It was written after a fresh
`make demo` failed: 2026-11-19 of the samples has no stuck messages, and counting the rows of an empty staged
write from the Delta history found no row count (Delta records none when a write adds no files).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spark.config import REPO_ROOT

pytestmark = [pytest.mark.spark, pytest.mark.slow]
SAMPLES = REPO_ROOT / "samples" / "landing"


def test_clwl_run_on_the_samples_publishes_every_date(samples_lake):
    """The run itself is the session's shared one (tests/conftest.py ``samples_lake``: `clwl run --landing
    samples/landing --lake L`, every date); it exited 0, or the fixture failed."""
    from clwl.lake.door import Lake

    dates = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())
    assert len(dates) >= 2, dates
    out, lake = samples_lake.output, Lake(samples_lake.lake)
    for d in dates:
        assert f"{d}: published" in out, out[-3000:]
    summary = lake.rows("gold.run_summary").to_pandas()
    stuck = lake.rows("gold.stuck_messages").to_pandas()
    for d in dates:
        row = summary[summary["run_date"].astype(str) == d].iloc[0]
        # The summary's count is the Delta commit's; it must equal the rows actually published, zero included.
        assert row["messages_stuck"] == int((stuck["run_date"].astype(str) == d).sum()), (d, row)
    # At least one sample date has no stuck messages: the empty write this test exists for.
    assert 0 in set(summary["messages_stuck"]), summary[["run_date", "messages_stuck"]]
    assert Path(out.split("report: ")[-1].split()[0]).is_file()

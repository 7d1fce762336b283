"""The landing folder's run dates have one definition (clwl.landing.layout.is_run_date): the command line's list of
dates, `clwl check`'s search for earlier configuration and the ingest's discovery take the same folders. A name
that date.fromisoformat reads but that is not YYYY-MM-DD (an ISO week date, the basic format) is not a run date:
discovery skips it, so the command line must not ask the ingest for it."""

from __future__ import annotations

from clwl.landing.discovery import discover_landing
from clwl.landing.layout import is_run_date, run_date_folders


def test_the_command_line_and_discovery_take_the_same_folders(tmp_path):
    for name in ("2026-11-20", "2026-11-19", "2026-W47-5", "20261121", "2026-02-30", ".2026-11-18", "notes"):
        (tmp_path / name / "QM1").mkdir(parents=True)
    (tmp_path / "2026-11-17").symlink_to(tmp_path / "2026-11-20")
    assert run_date_folders(tmp_path) == ["2026-11-19", "2026-11-20"]
    dates, _, notes = discover_landing(tmp_path, None)
    assert dates == run_date_folders(tmp_path)
    assert any("2026-W47-5" in n and "not a run date folder" in n for n in notes)


def test_is_run_date():
    assert is_run_date("2026-11-20")
    for text in ("2026-W47-5", "20261120", "2026-02-30", "2026-11-2", " 2026-11-20", ""):
        assert not is_run_date(text), text

"""A backfill touches its dates and nothing else (issue 43 item 4): `clwl run --from D1 --to D2` runs the landing
folder's dates of the range in order; a date that fails is the only one a retry runs again; re-running one date
rewrites only that date's partitions, and every other date's files and published entries stay byte for byte.

The estate: seven hand-made days (tests/handmade.py), 2026-11-14 to 2026-11-20, each QM1 putting three messages
to Q1 (instances on QM2 and QM3). On 2026-11-17 QM2 also puts one message with the MsgId of QM1's first message
of that day (a bridge keeps MsgId): every file parses, yet the suites ask for a msg_id once per run date
(expectations/silver.message_events.json and gold.routing_replay's (run_date, msg_id)), so the gate blocks that
day and only that day (the blocked day's data is tests/spark/test_blocked_run_cli.py's, in a smaller form). The
fix lands as a corrected file (the bridge's message with a MsgId of its own), as a re-sent export would.

What "untouched" means here: every file under a ``run_date=<D>`` partition folder of every table (bronze, silver,
gold, staging), by its bytes, and the published pointer's entries for D (its run id and its inputs' digests).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.handmade import PUTS_HEADER, chstatus_capture, config_capture, msg, put_row, write_day

# Nine date runs (seven, the retried one, the forced one): minutes on 2 cores, so `extended` (CI runs it third).
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.extended]

DATES = [f"2026-11-{d}" for d in range(14, 21)]
BAD = "2026-11-17"
QUEUES = {"Q1": {"QM2": {}, "QM3": {}}}


def _day(landing: Path, day: str, n: int, bridge: str | None) -> None:
    t0 = datetime.fromisoformat(day).replace(hour=6, tzinfo=timezone.utc)
    puts = [put_row(t0 + timedelta(minutes=10 * i), "QM1", "Q1", msg(100 * n + i)) for i in range(1, 4)]
    write_day(landing, day, "QM1", {
        "config_060000.mqsc": config_capture("QM1", {"QM2": {}, "QM3": {}}, QUEUES),
        "chstatus_060000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"}),
        "puts.csv": "\n".join([PUTS_HEADER, *puts]) + "\n"})
    if bridge:
        write_day(landing, day, "QM2", {
            "config_060000.mqsc": config_capture("QM2", {"QM1": {}, "QM3": {}}, QUEUES),
            "chstatus_060000.mqsc": chstatus_capture("QM2", {"TO.QM1": "RUNNING", "TO.QM3": "RUNNING"}),
            "puts_bridge.csv": "\n".join([PUTS_HEADER, put_row(t0 + timedelta(minutes=45), "QM2", "Q1", bridge)])
            + "\n"})


def _partition_files(lake: Path, day: str) -> dict[str, str]:
    """Every file of every ``run_date=<day>`` partition folder in the lake, by its bytes' digest."""
    return {str(f.relative_to(lake)): hashlib.sha256(f.read_bytes()).hexdigest()
            for folder in lake.rglob(f"run_date={day}") for f in folder.rglob("*") if f.is_file()}


def _published_entries(lake: Path) -> dict[str, tuple]:
    from clwl.lake.published import read_published

    pub = read_published(lake / "gold")
    return {d: (run_id, repr(pub.inputs.get(d))) for d, run_id in pub.dates.items()}


def _untouched(lake: Path, days: list[str]) -> dict[str, dict]:
    return {d: _partition_files(lake, d) for d in days}


@pytest.fixture(scope="module")
def backfilled(spark, tmp_path_factory):
    """The seven dates run by one `clwl run --from --to` (in-process, on the session's Spark), the bad day blocked."""
    from clwl.cli import main

    root = tmp_path_factory.mktemp("backfill")
    landing, lake = root / "landing", root / "lake"
    for n, day in enumerate(DATES):
        _day(landing, day, n, bridge=msg(100 * n + 1) if day == BAD else None)
    code = main(["run", "--landing", str(landing), "--lake", str(lake), "--from", DATES[0], "--to", DATES[-1]])
    return landing, lake, code


def test_a_backfill_runs_its_dates_in_order_and_the_failed_one_alone_is_retried(backfilled, capsys):
    from clwl.cli import main

    landing, lake, code = backfilled
    good = [d for d in DATES if d != BAD]
    assert code == 4  # one date blocked: the run did not publish every date
    published = _published_entries(lake)
    assert sorted(published) == good  # six published, the blocked one not
    before = _untouched(lake, good)
    assert all(before[d] for d in good)  # each good date has partition files to compare

    # The fix lands (QM2's message gets a MsgId of its own); the same backfill again runs only the failed date.
    n = DATES.index(BAD)
    _day(landing, BAD, n, bridge="414D5120514D32202020202020202020" + f"{1:016X}")
    capsys.readouterr()
    code = main(["run", "--landing", str(landing), "--lake", str(lake), "--from", DATES[0], "--to", DATES[-1]])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"backfill {DATES[0]} .. {DATES[-1]}: 7 date(s) in order" in out
    for d in good:
        assert f"{d}: unchanged since {published[d][0]}, published as is" in out, d
    assert f"  {BAD}: published; 4 messages" in out  # QM1's three and the bridge's one
    assert _untouched(lake, good) == before  # byte for byte
    after = _published_entries(lake)
    assert {d: after[d] for d in good} == {d: published[d] for d in good}
    assert BAD in after

    # Re-running one date rewrites that date only: the six others' files and pointer entries stay as they were.
    others = [d for d in DATES if d != "2026-11-16"]
    before, entries = _untouched(lake, others), {d: after[d] for d in others}
    code = main(["run", "--landing", str(landing), "--lake", str(lake), "--date", "2026-11-16", "--force"])
    assert code == 0
    assert _untouched(lake, others) == before
    final = _published_entries(lake)
    assert {d: final[d] for d in others} == entries
    assert final["2026-11-16"][0] != after["2026-11-16"][0]  # that date's run is the new one


def test_a_backfill_names_what_it_cannot_run(backfilled, capsys):
    """Refused before Spark starts, one line and exit 2: both --date and a range, a reversed range, a range with
    no landing folder. Days of a range with no folder are named, not invented."""
    from clwl.cli import main

    landing, lake, _ = backfilled
    base = ["run", "--landing", str(landing), "--lake", str(lake)]
    for extra, said in ((["--date", DATES[0], "--from", DATES[0]], "give either --date or --from/--to, not both"),
                        (["--from", DATES[3], "--to", DATES[1]], f"--from {DATES[3]} is after --to {DATES[1]}"),
                        (["--from", "2026-12-01"], "no landing folder for a date from 2026-12-01 to ...")):
        capsys.readouterr()
        assert main(base + extra) == 2, extra
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, err
    capsys.readouterr()
    assert main(base + ["--from", "2026-11-10", "--to", DATES[1]]) == 0  # published and unchanged: no Spark work
    out = capsys.readouterr().out
    assert f"backfill 2026-11-10 .. {DATES[1]}: 2 date(s) in order; no landing folder for 4 day(s): " \
           "2026-11-10, 2026-11-11, 2026-11-12, 2026-11-13" in out, out

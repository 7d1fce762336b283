"""A real day with a re-allocation publishes (issue: "A real day publishes", item 1), and a re-run of a date
gives the same run summary as the first run (item 4).

The estate is written by hand (tests/handmade.py), from docs/algorithm.md (re-allocation)'s account of re-allocation;
the samples never re-allocate a message. QM1 puts to Q1, which has instances on QM2 and QM3 (DEFBIND
NOTFIXED, every weight 50). Captures on QM1:

  06:00 config; CHSTATUS: TO.QM2 RETRYING, TO.QM3 RETRYING (both in the third tier of steps 6-9)
  07:00 CHSTATUS: TO.QM2 RUNNING,  TO.QM3 RETRYING (TO.QM3's retry failed again: re-allocation)

Puts, routed by the default profile (step 12: lowest DestSeqFactor, then lowest DestSeqNumber, then name;
each choice adds 1000/50 = 20 to the factor and takes the next sequence number):

  M1 06:01 not fixed      -> QM2 (all 0: name)            QM2 DSF 20 DSN 1; waits behind TO.QM2
  M2 06:02 not fixed      -> QM3 (0 < 20)                 QM3 DSF 20 DSN 2; waits behind TO.QM3
  M3 06:03 bind on open   -> QM2 (20 = 20, DSN 1 < 2)     QM2 DSF 40 DSN 3; waits; AccountingToken zeros
  M4 06:04 not fixed      -> QM3 (20 < 40)                QM3 DSF 40 DSN 4; waits behind TO.QM3
  M5 06:05 names QM3      -> QM3 (step 2)                 waits; named queue manager: not eligible
  M6 07:30 not fixed      -> QM2 (step 6: the only INACTIVE/RUNNING channel), delivered at once

At 07:00 TO.QM2 runs again: M1 and M3 are delivered. TO.QM3 retries and fails: its eligible messages M2 and
M4 are re-driven; step 6 now keeps only TO.QM2, so they move to QM2 (re-allocated, delivered at 07:00); M5 is
not eligible and stays. So stuck_messages holds M1 and M3 (they stayed behind TO.QM2 until 07:00: M1 because
TO.QM2 was still its most favourable destination, step 12; M3 bound on open) and M5 (held to the end of the
day): three rows, every one with a reason. M2 and M4 are in routing_replay with reallocations = 1 and
final_qmgr QM2, and not in stuck_messages.
"""

from __future__ import annotations

import pytest

from tests.handmade import DAY, copy_run, msg, reallocation_landing

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_a_day_with_a_reallocation_publishes_and_lists_only_what_stayed(spark, tmp_path):
    """With a re-sent file too (puts_resent.csv repeats M2 and M5): the day publishes, each message is routed
    once, exactly as without the re-sent file, and the two copies are quarantined naming both files."""
    from deltalake import DeltaTable

    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline

    config = PipelineConfig(lake=tmp_path / "lake", landing=reallocation_landing(tmp_path / "landing", resent=True))
    outcome = run_pipeline(config, [DAY], spark=spark, progress=lambda m: None)
    (day,) = outcome.dates
    assert day.published, day.failures
    assert outcome.published

    quarantine = DeltaTable(str(config.lake / "silver" / "quarantine")).to_pandas()
    assert len(quarantine) == 2 and set(quarantine.source_file) == {f"{DAY}/QM1/puts_resent.csv"}
    assert all(f"{DAY}/QM1/puts.csv" in r for r in quarantine.reason), list(quarantine.reason)
    replay = DeltaTable(str(config.lake / "gold" / "routing_replay")).to_pandas().set_index("msg_id")
    assert len(replay) == 6 and replay.index.is_unique
    assert list(replay.loc[[msg(i) for i in range(1, 7)], "qmgr"]) == ["QM2", "QM3", "QM2", "QM3", "QM3", "QM2"]
    for i in (2, 4):
        r = replay.loc[msg(i)]
        assert (r.reallocations, r.final_qmgr, r.final_channel) == (1, "QM2", "TO.QM2")
    stuck = DeltaTable(str(config.lake / "gold" / "stuck_messages")).to_pandas().set_index("msg_id")
    assert sorted(stuck.index) == [msg(1), msg(3), msg(5)]
    assert stuck["why"].notna().all()
    assert stuck.loc[msg(1), "why"] == "still-most-favourable"
    assert (stuck.loc[msg(3), "why"], stuck.loc[msg(3), "detail"]) == ("not-reallocatable", "bind-on-open")
    assert (stuck.loc[msg(5), "why"], stuck.loc[msg(5), "channel_state"]) == ("not-reallocatable", "RETRYING")
    released = stuck["released_at"].dt.tz_convert("UTC") if stuck["released_at"].dt.tz else stuck["released_at"]
    assert str(released[msg(1)])[:19] == "2026-11-20 07:00:00"
    assert released.isna()[msg(5)]


def test_a_rerun_of_a_date_gives_the_same_run_summary(spark, reallocation_lake, tmp_path):
    """run_summary's rows_read / accepted / quarantined are the date's files as ingested now, not the sum of
    every run's log rows: the second run reads nothing new (the files are unchanged) and must report the
    same counts as the first. The first run is the session's (tests/conftest.py ``reallocation_lake``), copied."""
    from deltalake import DeltaTable

    from spark.pipeline import run_pipeline

    config = copy_run(reallocation_lake, tmp_path)
    cols = ["rows_read", "rows_accepted", "rows_quarantined", "messages_replayed", "messages_stuck"]
    seen = []
    for run in range(2):
        if run:
            assert run_pipeline(config, [DAY], spark=spark, progress=lambda m: None).published
        summary = DeltaTable(str(config.lake / "gold" / "run_summary")).to_pandas()
        (row,) = summary.to_dict("records")
        seen.append({c: row[c] for c in cols})
    assert seen[0] == seen[1]
    # 3 captures (1 + 2 + 2 records... counted by the parsers) and 6 put rows: at least the 6 puts were read.
    assert seen[0]["rows_read"] == seen[0]["rows_accepted"] + seen[0]["rows_quarantined"] >= 6

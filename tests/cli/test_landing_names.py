"""Names that are not MQ names (issue 25 item 6): a run date folder's folder is a queue manager only when its name
is a valid MQ queue manager name (clwl.landing.layout.is_mq_name: 1-48 of A-Z a-z 0-9 . _ / %, ASCII). A lookalike
(``QＭ١``: a fullwidth M and an Arabic-Indic one) or a name with a terminal escape sequence is skipped with its
reason, its files never read as a queue manager: a copy of QM5's puts in it once held QM5's own rows back as
duplicates. Names found in the file system reach the terminal with their control characters escaped
(clwl.terminal.printable): `clwl check`'s report, the ingest's progress lines and its summary table.

No Spark session: discovery is the ingest's own (spark.ingest.discover_landing, which hands the ingest its
files), and `clwl check` holds back put records by the ingest's rules (docs/landing.md, "Held back").
"""

from __future__ import annotations

import json
import unicodedata
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from clwl.cli import main
from clwl.landing.discovery import discover_landing
from clwl.landing.layout import is_mq_name
from clwl.terminal import printable
from tests.handmade import PUTS_HEADER, chstatus_capture, config_capture, msg, put_row, write_day

DAY = "2026-11-20"
T = datetime(2026, 11, 20, tzinfo=timezone.utc)
LOOKALIKE = "Q\uff2d\u0661"  # QＭ١: fullwidth M, Arabic-Indic digit one
TITLE = "\x1b]0;title\x07"  # ESC ] 0 ; title BEL: sets the terminal's title; sorts before QM5


def _raw_controls(text: str) -> list[str]:
    """Characters of ``text`` a terminal would act on (newlines between lines aside)."""
    return [f"U+{ord(c):04X}" for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Cs")]


@pytest.fixture
def landing(tmp_path) -> Path:
    """QM5 puts 3 messages, with its configuration and channel status; a copy of its put file in each of the two
    folders whose names are not MQ names."""
    puts = "\n".join((PUTS_HEADER, *(put_row(T + timedelta(hours=6, minutes=m), "QM5", "APP.ORDERS", msg(i))
                                     for i, m in enumerate((10, 20, 30), 1)))) + "\n"
    write_day(tmp_path, DAY, "QM5", {
        "config_060000.mqsc": config_capture("QM5", {"QM2": {}}, {"APP.ORDERS": {"QM5": {}, "QM2": {}}}),
        "chstatus_060000.mqsc": chstatus_capture("QM5", {"TO.QM2": "RUNNING"}),
        "puts.csv": puts})
    for name in (LOOKALIKE, TITLE):
        write_day(tmp_path, DAY, name, {"puts.csv": puts})
    return tmp_path


def test_is_mq_name():
    for name in ("QM5", "qm5", "QM.PROD_1", "A%B/C", "Q" * 48):
        assert is_mq_name(name), name
    for name in (LOOKALIKE, TITLE, "QM5\n", "QM 5", "QM-5", "Q" * 49, "", "QM\u00e9", "QM\u200b5"):
        assert not is_mq_name(name), name


def test_printable_escapes_what_a_terminal_acts_on():
    assert printable("QM5/puts.csv") == "QM5/puts.csv"
    assert printable(f"{DAY}/{TITLE}/") == f"{DAY}/\\x1b]0;title\\x07/"
    assert printable("a\nb\tc\x85d\u202ee\udcff") == "a\\nb\\tc\\x85d\\u202ee\\udcff"  # C1, bidi, not UTF-8
    assert printable(LOOKALIKE) == LOOKALIKE  # printable: shown, and the skip reason names its code points
    assert printable(printable(TITLE)) == printable(TITLE)


def test_discovery_skips_folders_that_are_not_mq_names_with_the_reason(landing):
    dates, files, notes = discover_landing(landing)
    assert dates == [DAY]
    skipped = {f.source_file: f for f in files if f.skipped}
    assert set(skipped) == {f"{DAY}/{LOOKALIKE}/", f"{DAY}/{TITLE}/"}
    for f in skipped.values():
        assert f.observing_qmgr is None and f.path == ""  # not a queue manager, nothing opened
        assert f.reject.startswith("skipped, not read: not a queue manager folder: the name is not a valid MQ queue "
                                   "manager name (1-48 characters of A-Z, a-z, 0-9, '.', '_', '/', '%'; it has ")
    assert "it has U+0661, U+FF2D)" in skipped[f"{DAY}/{LOOKALIKE}/"].reject
    assert "it has U+0007, U+001B, U+003B, U+005D)" in skipped[f"{DAY}/{TITLE}/"].reject
    # Only QM5's own files are read, and as QM5's.
    read = [f for f in files if not f.skipped]
    assert sorted(f.source_file for f in read) == [f"{DAY}/QM5/chstatus_060000.mqsc", f"{DAY}/QM5/config_060000.mqsc",
                                                   f"{DAY}/QM5/puts.csv"]
    assert {f.observing_qmgr for f in read} == {"QM5"}
    assert sorted(n.split(":")[0] for n in notes) == sorted(f"skipped {f}" for f in skipped)


def test_check_keeps_qm5s_rows_and_prints_no_raw_control_character(capsys, landing):
    code, out = main(["check", str(landing)]), capsys.readouterr()
    assert out.err == ""
    # QM5's rows are its own: none held back as a duplicate of a copy (the copy under the escape sequence's
    # folder came first by name, and QM5's 3 rows were held back).
    assert "    puts.csv              csv       3 read, 3 accepted, 0 quarantined\n" in out.out
    assert _raw_controls(out.out) == []
    assert "  skipped 2026-11-20/\\x1b]0;title\\x07/: not a queue manager folder" in out.out
    assert f"  skipped 2026-11-20/{LOOKALIKE}/: not a queue manager folder" in out.out
    assert code == 1  # the two skipped folders are quarantined, as every skipped item is

    main(["check", str(landing), "--json"])
    result = json.loads(capsys.readouterr().out)
    by_file = {f["source_file"]: f for f in result["files"]}
    qm5 = by_file[f"{DAY}/QM5/puts.csv"]
    assert (qm5["records_accepted"], qm5["held_back"]) == (3, 0)
    assert result["summary"]["held_back"] == 0
    assert {f["status"] for name, f in by_file.items() if not name.startswith(f"{DAY}/QM5/")} == {"skipped"}


def test_the_ingest_prints_file_names_escaped(capsys):
    """The command line's progress printer (every `clwl ingest` / `clwl run` progress line) and the ingest's
    summary table, with a skipped folder named with an escape sequence."""
    from clwl.cli.pipeline import progress
    from spark.ingest.run_log import FileResult, IngestSummary

    progress(f"  skipped {DAY}/{TITLE}/: not a queue manager folder")
    summary = IngestSummary(run_id="r", run_dates=[DAY], landing="landing", lake="lake", files=[
        FileResult(f"{DAY}/{TITLE}/", DAY, None, "unknown", "rejected", 1, 0, 1,
                   reason=f"skipped, not read: {TITLE} is no queue manager"),
        FileResult(f"{DAY}/QM5/puts.csv", DAY, "QM5", "csv", "ingested", 3, 3, 0)])
    print(summary.format_table())
    out = capsys.readouterr().out
    assert _raw_controls(out) == []
    assert out.startswith(f"  skipped {DAY}/\\x1b]0;title\\x07/: not a queue manager folder\n")
    lines = out.splitlines()
    assert f"{DAY}/\\x1b]0;title\\x07/  unknown   rejected" in lines[3]
    assert "skipped, not read: \\x1b]0;title\\x07 is no queue manager" in lines[3]
    assert lines[4].index(" csv ") == lines[3].index(" unknown ")  # the column as wide as the escaped name

"""One printing rule for every command (issue 40 item 4): text from an input (a capture, a landing folder's name, a
lake's rows) or typed by the user (--lake, --queue, --sender, --local-qmgr, --landing, a query's values) reaches
stdout and stderr through clwl.terminal.printable: ESC, BEL and the other characters a terminal acts on are printed
escaped (``\\x1b]0;PWNED\\x07``), never raw. A lint remedy line meant to be pasted into runmqsc is what it shows.

No Spark: captures are written by hand (tests/handmade.py), and the small lake is written with deltalake in the
silver tables' shape: as a lake written before the readers quarantined such names would hold them.
"""

from __future__ import annotations

import json
import unicodedata
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from clwl.cli import main
from clwl.engine.view import record_identity
from clwl.parse.common import MqscRecord
from clwl.terminal import printable
from tests.handmade import chstatus_capture, config_capture, write_day

TITLE = "\x1b]0;PWNED\x07"  # ESC ] 0 ; PWNED BEL: sets the terminal's title
SHOWN = "\\x1b]0;PWNED\\x07"  # how every command prints it
QUEUE = f"APP.{TITLE}AUDIT"
DAY = "2026-11-20"
MSG = "414D5120514D3120202020202020202000000000000000AB"  # well-formed: explain refuses any other id at once
UTC = timezone.utc


def _raw_controls(text: str) -> list[str]:
    """Characters of ``text`` a terminal would act on (the newlines between lines aside)."""
    return [f"U+{ord(c):04X}" for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Cs")]


def _clwl(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as stop:  # argparse's refusals
        code = stop.code
    out, err = capsys.readouterr()
    assert _raw_controls(out) == [] and _raw_controls(err) == [], (out, err)
    return code, out, err


def test_printable_is_the_rule_and_escaping_twice_changes_nothing():
    assert printable(QUEUE) == f"APP.{SHOWN}AUDIT"
    assert printable(printable(QUEUE)) == printable(QUEUE)
    assert printable("QM1 APP.ORDERS (CL1)") == "QM1 APP.ORDERS (CL1)"


# -- captures: lint, advise, route ------------------------------------------------------------------------------
@pytest.fixture
def landing(tmp_path) -> Path:
    """QM1's captures in a landing queue manager folder whose name carries the escape; its configuration capture
    holds one cluster queue whose name carries it too (quarantined) and APP.ORDERS hosted by QM2 alone."""
    config = config_capture("QM1", {"QM2": {}}, {"APP.ORDERS": {"QM2": {}}}).replace(
        "AMQ8409I: Display Queue details.",
        f"AMQ8409I: Display Queue details.\n   QUEUE({QUEUE})   TYPE(QCLUSTER)\n   CLUSQMGR(QM2)   CLUSTER(CL1)\n"
        "AMQ8409I: Display Queue details.", 1)
    return write_day(tmp_path / "landing", DAY, f"QM1{TITLE}", {
        "config_060000.mqsc": config, "chstatus_060000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING"})})


def _notes(err: str, command: str) -> None:
    """The captures-used note names the folder escaped; the quarantined record is a warning, escaped."""
    assert f"clwl {command}: captures used (the latest): " in err and f"QM1{SHOWN}/config_060000.mqsc" in err
    warning = next(line for line in err.splitlines() if "(record not used)" in line)
    assert f"QM1{SHOWN}/config_060000.mqsc:" in warning
    assert f"control character in a name: QUEUE(APP.{SHOWN}AUDIT) holds U+001B, not a valid MQ name" in warning


def test_lint_captures_used_note_and_quarantine_warning(capsys, landing):
    code, out, err = _clwl(capsys, "lint", "--mqsc", str(landing))
    assert code == 0
    _notes(err, "lint")
    assert "single-instance" in out and f"APP.{SHOWN}" not in out  # the quarantined queue gives no finding


def test_lint_date_folder_with_a_queue_manager_folder_named_with_an_escape(capsys, landing):
    code, out, err = _clwl(capsys, "lint", "--mqsc", str(landing.parent))
    assert code == 0
    _notes(err, "lint")


def test_advise_refuses_a_local_qmgr_that_is_no_mq_name(capsys, landing):
    code, out, err = _clwl(capsys, "advise", "--mqsc", str(landing), "--queue", "APP.ORDERS", "--target", "QM2=100",
                           "--local-qmgr", f"QM1{TITLE}")
    assert (code, out) == (2, "")
    assert err == (f"clwl advise: --local-qmgr: 'QM1{SHOWN}' is not a valid MQ queue manager name (1-48 characters "
                   "of A-Z, a-z, 0-9, '.', '_', '/', '%')\n")


def test_advise_refuses_a_sending_queue_manager_named_by_its_folder_that_is_no_mq_name(capsys, tmp_path):
    # no banner, no DISPLAY QMGR: the folder's name would be the sender, and go into the runmqsc commands
    config = config_capture("QM1", {"QM2": {}}, {"APP.ORDERS": {"QM1": {}, "QM2": {}}})
    config = config.replace("Starting MQSC for queue manager QM1.", "").replace("QMNAME(QM1)", "QMNAME( )")
    folder = write_day(tmp_path, DAY, f"QM1{TITLE}", {"config_060000.mqsc": config})
    code, out, err = _clwl(capsys, "advise", "--mqsc", str(folder), "--queue", "APP.ORDERS", "--target",
                           "QM1=50,QM2=50")
    assert (code, out) == (2, "")
    assert err.endswith(f"clwl advise: the sending queue manager's name 'QM1{SHOWN}' (from the captures) is not a "
                        "valid MQ queue manager name (1-48 characters of A-Z, a-z, 0-9, '.', '_', '/', '%'); name "
                        "it with --local-qmgr\n")


def test_advise_escapes_the_notes_and_the_queue_typed(capsys, landing):
    code, out, err = _clwl(capsys, "advise", "--mqsc", str(landing), "--queue", QUEUE, "--target", "QM2=100")
    assert (code, out) == (2, "")
    _notes(err, "advise")
    assert err.splitlines()[-1].startswith(f"clwl advise: --queue: APP.{SHOWN}AUDIT is not a cluster queue known "
                                           "to QM1")


def test_route_escapes_the_queue_typed(capsys, landing):
    code, out, err = _clwl(capsys, "route", "--mqsc", str(landing), "--queue", QUEUE)
    assert code == 3  # MQRC_UNKNOWN_OBJECT_NAME: the quarantined queue is unknown
    assert out.startswith(f"Routing 1 message(s) to APP.{SHOWN}AUDIT from QM1 ")
    _notes(err, "route")


def test_route_explain_and_distribution_lines(capsys, landing):
    code, out, _ = _clwl(capsys, "route", "--mqsc", str(landing), "--queue", "APP.ORDERS", "--count", "2",
                         "--explain")
    assert code == 0 and "Distribution:" in out and "  QM2 " in out


def test_argparse_error_line_is_escaped(capsys):
    code, out, err = _clwl(capsys, "lint", QUEUE)
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == f"clwl: error: unrecognized arguments: APP.{SHOWN}AUDIT"


# -- a lake: lint --lake, drift, query, published, blast, explain ------------------------------------------------
def _at(hour: int) -> datetime:
    return datetime(2026, 11, 20, hour, tzinfo=UTC)


def _history_row(kind: str, attrs: dict, valid_from: datetime) -> dict:
    key = "|".join(str(p) for p in record_identity(MqscRecord(kind, attrs, "", 0)))
    return {"observing_qmgr": "QM1", "kind": kind, "object_key": key, "attrs": attrs, "valid_from": valid_from,
            "valid_to": None, "source_file": f"{DAY}/QM1/config_{valid_from:%H%M%S}.mqsc"}


@pytest.fixture
def lake(tmp_path) -> Path:
    """silver.config_history, silver.channel_status and silver.ingest_files of QM1 on DAY, written with deltalake:
    APP.ORDERS on QM1 and QM2 from 06:00; at 09:00 QUEUE appears, hosted by QM2 alone (single-instance). And a
    gold.routing_replay of one message, MSG (48 hex digits) from QM1."""
    import pyarrow as pa
    from deltalake import write_deltalake

    ts = pa.timestamp("us", tz="UTC")
    clusqmgr = {"CLUSQMGR": "QM2", "CHANNEL": "TO.QM2", "CLUSTER": "CL1", "CLWLWGHT": "50", "DEFTYPE": "CLUSSDRA",
                "STATUS": "RUNNING", "SUSPEND": "NO", "XMITQ": "SYSTEM.CLUSTER.TRANSMIT.QUEUE"}
    receiver = {**clusqmgr, "CLUSQMGR": "QM1", "CHANNEL": "TO.QM1", "DEFTYPE": "CLUSRCVR", "XMITQ": ""}

    def qcluster(queue: str, host: str) -> dict:
        return {"QUEUE": queue, "TYPE": "QCLUSTER", "CLUSQMGR": host, "CLUSQT": "QLOCAL", "CLUSTER": "CL1",
                "DEFBIND": "NOTFIXED", "PUT": "ENABLED"}

    rows = [_history_row("QMGR", {"QMNAME": "QM1", "CLWLUSEQ": "ANY"}, _at(6)),
            _history_row("CLUSQMGR", receiver, _at(6)), _history_row("CLUSQMGR", clusqmgr, _at(6)),
            _history_row("QCLUSTER", qcluster("APP.ORDERS", "QM1"), _at(6)),
            _history_row("QCLUSTER", qcluster("APP.ORDERS", "QM2"), _at(6)),
            _history_row("QCLUSTER", qcluster(QUEUE, "QM2"), _at(9))]
    schema = pa.schema([("observing_qmgr", pa.string()), ("kind", pa.string()), ("object_key", pa.string()),
                        ("attrs", pa.map_(pa.string(), pa.string())), ("valid_from", ts), ("valid_to", ts),
                        ("source_file", pa.string())])
    root = tmp_path / "lake"
    for row in rows:
        row["attrs"] = list(row["attrs"].items())
    write_deltalake(str(root / "silver" / "config_history"), pa.Table.from_pylist(rows, schema))
    status = pa.schema([("observing_qmgr", pa.string()), ("channel", pa.string()), ("chltype", pa.string()),
                        ("status", pa.string()), ("xmitq", pa.string()), ("substate", pa.string()),
                        ("valid_from", ts), ("valid_to", ts), ("source_file", pa.string())])
    write_deltalake(str(root / "silver" / "channel_status"), pa.Table.from_pylist([
        {"observing_qmgr": "QM1", "channel": "TO.QM2", "chltype": "CLUSSDR", "status": "RUNNING",
         "xmitq": "SYSTEM.CLUSTER.TRANSMIT.QUEUE", "substate": "", "valid_from": _at(6), "valid_to": None,
         "source_file": f"{DAY}/QM1/chstatus_060000.mqsc"}], status))
    write_deltalake(str(root / "silver" / "ingest_files"), pa.Table.from_pylist(
        [{"run_date": date(2026, 11, 20), "status": "ingested", "observing_qmgr": "QM1",
          "source_file": f"{DAY}/QM1/config_060000.mqsc", "capture_time": _at(6), "reason": None,
          "ingested_at": _at(7)}],
        pa.schema([("run_date", pa.date32()), ("status", pa.string()), ("observing_qmgr", pa.string()),
                   ("source_file", pa.string()), ("capture_time", ts), ("reason", pa.string()),
                   ("ingested_at", ts)])))
    write_deltalake(str(root / "gold" / "routing_replay"), pa.Table.from_pylist(  # what explain looks a message up in
        [{"msg_id": MSG, "run_date": date(2026, 11, 20), "sending_qmgr": "QM1"}],
        pa.schema([("msg_id", pa.string()), ("run_date", pa.date32()), ("sending_qmgr", pa.string())])))
    return root


def test_lint_lake_remedy_line_is_escaped(capsys, lake):
    code, out, err = _clwl(capsys, "lint", "--lake", str(lake), "--date", DAY)
    assert code == 0, err
    assert f"  remedy: DEFINE QLOCAL(APP.{SHOWN}AUDIT) CLUSTER(CL1) on a second queue manager" in out
    assert f"  single-instance  APP.{SHOWN}AUDIT" in out
    code, out, _ = _clwl(capsys, "lint", "--lake", str(lake), "--date", DAY, "--json")
    [finding] = [f for f in json.loads(out)["findings"] if f["object"] == QUEUE]  # JSON keeps the value, escaped
    assert finding["remedy"].startswith(f"DEFINE QLOCAL({QUEUE}) ")


def test_drift_changes_and_effects_are_escaped(capsys, lake):
    code, out, err = _clwl(capsys, "drift", "--lake", str(lake), "--date", DAY)
    assert code == 0, err
    change = next(line for line in out.splitlines() if "(absent)" in line)
    assert f"QCLUSTER APP.{SHOWN}AUDIT on QM2 (CL1)" in change


def test_query_csv_and_table_cells_and_names_are_escaped(capsys, lake):
    sql = f"SELECT object_key, '{TITLE}' AS \"t{TITLE}\" FROM config_history WHERE valid_from > '{DAY} 08:00'"
    code, out, err = _clwl(capsys, "query", sql, "--lake", str(lake), "--format", "csv")
    assert code == 0, err
    assert out.splitlines() == [f"object_key,t{SHOWN}", f"QCLUSTER|APP.{SHOWN}AUDIT|QM2|CL1|,{SHOWN}"]
    code, out, err = _clwl(capsys, "query", sql, "--lake", str(lake))
    assert code == 0, err
    assert f"t{SHOWN}" in out.splitlines()[0] and f"QCLUSTER|APP.{SHOWN}AUDIT|QM2|CL1|" in out


def test_query_json_escapes_as_json_does_and_keeps_the_values(capsys, lake):
    # C0 controls are JSON's own escapes; a C1 control (CSI, U+009B) and U+202E would have gone out raw
    sql = f"SELECT object_key, '\u009b2J\u202e{TITLE}' AS t FROM config_history WHERE valid_from > '{DAY} 08:00'"
    code, out, err = _clwl(capsys, "query", sql, "--lake", str(lake), "--json")
    assert code == 0, err
    assert "\\u009b2J\\u202e\\u001b]0;PWNED\\u0007" in out
    assert json.loads(out) == {"object_key": f"QCLUSTER|{QUEUE}|QM2|CL1|", "t": f"\u009b2J\u202e{TITLE}"}


@pytest.mark.parametrize("command", ["lint", "drift", "blast", "published"])
def test_a_lake_typed_with_an_escape_is_printed_escaped(capsys, tmp_path, command):
    where = tmp_path / f"lake{TITLE}"
    code, out, err = _clwl(capsys, command, "--lake", str(where), "--date", DAY) if command != "published" else \
        _clwl(capsys, command, "--lake", str(where))
    assert (code, out) == (2, "")
    assert f"lake{SHOWN}" in err and err.count("\n") == 1


def test_explain_escapes_the_sender_and_the_message_id_typed(capsys, lake):
    code, out, err = _clwl(capsys, "explain", MSG, "--lake", str(lake), "--sender", f"QM1{TITLE}")
    assert (code, out) == (2, "")
    assert err == f"clwl explain: message {MSG} is not in the published gold.routing_replay from QM1{SHOWN}\n"
    code, out, err = _clwl(capsys, "explain", f"414D51{TITLE}", "--lake", str(lake))
    assert (code, out) == (2, "")
    # Not a message id (issue 39 item 11): refused before the lake is read, the typed text escaped in the refusal.
    assert err.startswith(f"clwl explain: '414D51{SHOWN}' is not a message id: an id has 48 hex digits")
    assert "\x1b" not in err and "\x07" not in err and err.count("\n") == 1


def test_explain_and_blast_name_the_lake_escaped(capsys, tmp_path, lake):
    moved = lake.rename(tmp_path / f"lake{TITLE}")
    code, out, err = _clwl(capsys, "explain", MSG, "--lake", str(moved), "--sender", f"QM1{TITLE}")
    assert (code, out) == (2, "") and f"lake{SHOWN}" in err and err.count("\n") == 1
    code, out, err = _clwl(capsys, "blast", "--lake", str(moved), "--date", DAY)
    assert (code, out) == (2, "") and err.count("\n") == 1


def test_published_lines_are_escaped(capsys, tmp_path):
    import pyarrow as pa
    from deltalake import write_deltalake

    write_deltalake(str(tmp_path / "lake" / "gold" / "run_summary"), pa.table({"run_date": ["2026-11-20"]}))
    where = (tmp_path / "lake").rename(tmp_path / f"lake{TITLE}")  # deltalake writes no such path itself
    code, out, err = _clwl(capsys, "published", "--lake", str(where))
    assert code == 0, err
    assert out.startswith(f"published in {tmp_path}/lake{SHOWN}/gold")


# -- readable answers built from a lake's rows: blast and explain, on values written by hand -----------------------
def test_blast_readable_answer_is_escaped(capsys):
    from collections import Counter

    from clwl.analyses.blast import blast_radius_of_events
    from clwl.cli.blast import write_readable
    from tests.unit.test_blast import DAY as DAY_OF_BLAST
    from tests.unit.test_blast import QM1, qm1_day

    radius = blast_radius_of_events(DAY_OF_BLAST, {"QM1": QM1}, {"QM1": qm1_day()})
    radius.cases[0].queues[QUEUE] = Counter(stuck=9)  # a queue name as a lake's rows could hold it
    write_readable(radius)
    out, err = capsys.readouterr()
    assert _raw_controls(out) == [] and err == ""
    assert f"  queue manager QM2: queues APP.{SHOWN}AUDIT 9, Q1 4, Q2 1; applications " in out


def test_explain_readable_answer_is_escaped(capsys):
    from clwl.analyses.explain import Explanation
    from clwl.cli.explain import write_readable

    row = {"put_time": datetime(2026, 11, 20, 6, tzinfo=UTC), "queue": QUEUE, "target_qmgr": None, "bind": "open",
           "length": 10, "profile": "default", "error": "MQRC_UNKNOWN_OBJECT_NAME", "reason_code": 2085,
           "trace": f"no instance of {QUEUE}"}
    ex = Explanation(DAY, "QM1", MSG, row, 3)
    ex.differences = [f"the replay has {QUEUE}"]
    write_readable(ex)
    out, _ = capsys.readouterr()
    assert _raw_controls(out) == []
    assert f"  put      2026-11-20 06:00:00 UTC on QM1 to APP.{SHOWN}AUDIT, bind open, " in out
    assert f"  not put: MQRC_UNKNOWN_OBJECT_NAME (2085): no instance of APP.{SHOWN}AUDIT" in out.splitlines()
    assert f"  the replay has APP.{SHOWN}AUDIT" in out.splitlines()


# -- the pipeline's own messages, before Spark ------------------------------------------------------------------
@pytest.mark.parametrize("command", ["run", "ingest"])
def test_run_and_ingest_name_the_landing_escaped(capsys, tmp_path, command):
    code, out, err = _clwl(capsys, command, "--landing", str(tmp_path / f"landing{TITLE}"), "--lake",
                           str(tmp_path / "lake"))
    assert code == 2
    assert err == f"clwl {command}: landing folder {tmp_path}/landing{SHOWN} does not exist\n"

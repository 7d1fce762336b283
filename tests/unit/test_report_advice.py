"""The four answers of issue 28 as report sections (clwl/report/advice.py): configuration findings (clwl lint),
what changed since the previous day (clwl drift), weights for an even split (clwl advise) and the blast radius
(clwl blast), each built from its answer's own function; an answer that cannot be given is one sentence and the
report still renders.

The hand-made estate (tests/handmade.py, runmqsc's printed shape), QM1's view captured at 06:00 on 2026-11-20,
cluster CL1, every CLUSRCVR advertising CLWLWGHT(50) except QM2's, CLWLWGHT(80); CLWLMRUC 999999999, every queue
DEFBIND(NOTFIXED):

  Q1 on QM2, QM3 and QM4, QM4's instance PUT(DISABLED);   Q2 on QM3 and QM4;   Q3 on QM2 only.

Shares from QM1 (docs/algorithm.md): step 1 drops a PUT(DISABLED) instance; with several candidates left and
nothing stateful, step 12 gives each candidate its weight over the candidates' total (clwl/engine/shares.py). So Q1:
QM2 80/130 = 61.5 %, QM3 50/130 = 38.5 %, QM4 0 %; Q2: QM3 and QM4 50/100 = 50 % each (even); Q3: QM2 100 %
(one host)."""

from __future__ import annotations

import datetime as dt
import re
from datetime import datetime, timezone

import pandas as pd
import pytest

from clwl.analyses.blast import PutEvent, blast_radius_of_events
from clwl.analyses.drift import drift_from_rows
from clwl.analyses.lint import lint_captures
from clwl.engine.replay import timeline_from_captures
from clwl.engine.view import record_identity
from clwl.parse.common import MqscRecord
from clwl.parse.mqsc import parse_mqsc_text
from clwl.report import Day, Report, build_report, render_html, render_md
from clwl.report.advice import (
    MAX_ADVICE_ROWS,
    Answer,
    Question,
    answer,
    blast_answer,
    drift_answer,
    even_split,
    even_split_answer,
    even_target,
    lint_answer,
)
from tests.handmade import chstatus_capture, config_capture

DAY = dt.date(2026, 11, 20)
UTC = timezone.utc
T6 = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
TITLES = ("Configuration findings", "What changed since the previous day", "Across days",
          "Queue depth from the trace", "Weights for an even split", "Blast radius")


def at(hh: int, mm: int = 0, day: int = 20) -> datetime:
    return datetime(2026, 11, day, hh, mm, tzinfo=UTC)


def qm1_records(queues: dict | None = None) -> list[MqscRecord]:
    text = config_capture("QM1", {"QM2": {"CLWLWGHT": "80"}, "QM3": {}, "QM4": {}}, queues or {
        "Q1": {"QM2": {}, "QM3": {}, "QM4": {"PUT": "DISABLED"}}, "Q2": {"QM3": {}, "QM4": {}}, "Q3": {"QM2": {}}})
    parsed = parse_mqsc_text(text, "2026-11-20/QM1/config_060000.mqsc")
    assert not parsed.problems
    return parsed.records


def qm1_timeline(queues: dict | None = None):
    return timeline_from_captures("QM1", [(T6, set(), qm1_records(queues))])


def rows_of(ans: Answer, table: int = 0) -> list[list[str]]:
    return [[text for text, _ in row] for row in ans.tables[table][1].rows]


def empty_day(**kw) -> Day:
    return Day(DAY, "run-1", routing_cube=pd.DataFrame(columns=["sending_qmgr", "queue", "messages"]),
               stuck=pd.DataFrame(), distribution=pd.DataFrame(), run_summary=pd.DataFrame(), **kw)


# -- weights for an even split -------------------------------------------------------------------------------------
def test_an_even_target_is_in_hundredths_adding_up_to_100():
    assert even_target(["QM3", "QM2", "QM4"]) == {"QM2": 33.34, "QM3": 33.33, "QM4": 33.33}
    assert even_target(["QM1", "QM2", "QM3", "QM4"]) == dict.fromkeys(("QM1", "QM2", "QM3", "QM4"), 25.0)
    six = even_target([f"QM{i}" for i in range(6)])
    assert sorted(six.values()) == [16.66, 16.66, 16.67, 16.67, 16.67, 16.67] and round(sum(six.values()), 6) == 100


def test_the_uneven_queue_gets_the_advisors_even_split_and_the_rest_are_named():
    """Q1 from QM1 (61.5 / 38.5 / 0, the module docstring) is not even: target QM2 33.34, QM3 33.33, QM4 33.33.
    QM4's instance is PUT(DISABLED): step 1 eliminates it before step 12, so weights cannot give it its third
    (what blocks it: step 1, with the ALTER that re-enables it). Between QM2 and QM3, 33.34 : 33.33 is a ratio
    within 1/3333 of 1: no two whole weights of 1-99 but equal ones come closer, and the equal pairs that change
    one channel are TO.QM2 80 -> 50 and TO.QM3 50 -> 80. TO.QM3 is in Q2's step-12 rotation, TO.QM2 in no other
    queue's (Q3 has one instance: no rotation), and the fewest other queues touched wins (docs/advise.md):
    TO.QM2 80 -> 50, on QM2 (the CLUSRCVR's owner), giving QM2 and QM3 50 % each. Q2 is even already and Q3 has
    one host: named, not advised. NOPE is no cluster queue of QM1's and QMX has no configuration: named too."""
    traffic = [("QM1", "Q1", 30), ("QM1", "Q2", 20), ("QM1", "Q3", 5), ("QM1", "NOPE", 1), ("QMX", "Q1", 3)]
    split = even_split({"QM1": qm1_timeline()}, traffic, DAY)
    assert [(s, q, n) for s, q, n, _ in split.advised] == [("QM1", "Q1", 30)]
    assert split.even == ["QM1 Q2", "QM1 Q3"] and split.unknown == ["QM1 NOPE", "QMX Q1"]
    ans = Answer("even-split", "Weights for an even split", "")
    even_split_answer(ans, split, DAY)
    [row] = rows_of(ans)
    assert row[:6] == ["QM1", "Q1", "30", "QM2 61.5 %, QM3 38.5 %, QM4 0.0 %", "TO.QM2 80 → 50 (on QM2)",
                       "QM2 50.0 %, QM3 50.0 %, QM4 0.0 %"]
    assert row[6].startswith("QM4 (step 1): QM4's instance of Q1 is PUT(DISABLED); instead: on QM4: "
                             "ALTER QLOCAL(Q1) PUT(ENABLED)")
    assert row[7] == "no other queue"
    assert ans.lines[0] == "Not evenly split on 2026-11-20: 1 sending queue manager and queue, below."
    assert "Already even, or one host: QM1 Q2, QM1 Q3." in ans.lines
    assert any("QM1 NOPE, QMX Q1" in s for s in ans.lines)


def test_the_other_senders_that_move_with_the_proposal_are_named():
    """Issue 39 item 8, in the report. The day of the test above, and QM5's configuration beside QM1's: QM5 reaches
    QM2 over TO.QM2 (CLWLWGHT 80, the same receiver QM1 sees) and QM3 over TO.QM3 (50), Q1 on both: 80/130 =
    61.5 % and 38.5 %. The proposal for QM1's Q1 (TO.QM2 80 -> 50, on QM2) is what QM5 sees too: its Q1 goes to
    50/50, so the row names it among what also moves. QM5 put nothing that day: its configuration still routes
    over the changed channel."""
    qm5 = timeline_from_captures("QM5", [(T6, set(), parse_mqsc_text(config_capture(
        "QM5", {"QM2": {"CLWLWGHT": "80"}, "QM3": {}}, {"Q1": {"QM2": {}, "QM3": {}}}), "qm5.mqsc").records)])
    split = even_split({"QM1": qm1_timeline(), "QM5": qm5}, [("QM1", "Q1", 30)], DAY)
    (_, _, _, advice), = split.advised
    assert [(e.sender, e.queue, e.before, e.after) for e in advice.other_senders] == [
        ("QM5", "Q1", pytest.approx({"QM2": 8000 / 130, "QM3": 5000 / 130}), {"QM2": 50.0, "QM3": 50.0})]
    ans = Answer("even-split", "", "")
    even_split_answer(ans, split, DAY)
    assert rows_of(ans)[0][7] == "QM5 Q1"


def test_at_most_ten_pairs_are_shown_the_busiest_first():
    """Twelve queues on QM2 and QM3 from QM1: every one 61.5 / 38.5 (TO.QM2 80, TO.QM3 50), none even. The ten with
    the most messages are shown, busiest first; the line says there are twelve."""
    queues = {f"Q{i:02d}": {"QM2": {}, "QM3": {}} for i in range(1, 13)}
    traffic = [("QM1", f"Q{i:02d}", 100 + i) for i in range(1, 13)]
    split = even_split({"QM1": qm1_timeline(queues)}, traffic, DAY)
    ans = Answer("even-split", "", "")
    even_split_answer(ans, split, DAY)
    shown = rows_of(ans)
    assert len(shown) == MAX_ADVICE_ROWS and ans.tables[0][1].more == 2
    assert [r[1] for r in shown] == [f"Q{i:02d}" for i in range(12, 2, -1)]
    assert ans.lines[0] == ("Not evenly split on 2026-11-20: 12 sending queue manager and queue pairs; the 10 with "
                            "the most messages below.")


# -- configuration findings ------------------------------------------------------------------------------------------
def test_the_findings_are_counted_per_rule_and_tabled_with_their_remedy():
    """QM1's captures: Q1's instance on QM4 is PUT(DISABLED) (rule put-disabled-instance) and Q3 is hosted by QM2
    alone (single-instance). Nothing else applies: no local instance (local-instance-wins), DEFBIND(NOTFIXED)
    everywhere (bind-on-open-default), no DISPLAY CHANNEL records, no suspension, CLWLMRUC 999999999."""
    ans = Answer("lint", "Configuration findings", "")
    lint_answer(ans, lint_captures({"QM1": qm1_records()}))
    # clwl lint places each finding on the queue manager the object belongs to (QM4's instance, QM2's queue).
    assert ans.lines == ["2 findings on 2 queue managers (QM2, QM4): put-disabled-instance 1, "
                         "single-instance 1."]
    rows = rows_of(ans)
    # qmgr, rule, severity, object, seen_by, detail, remedy (clwl.report.advice.LINT_COLS)
    assert [[r[0], r[1], r[3]] for r in rows] == [["QM2", "single-instance", "Q3"], ["QM4", "put-disabled-instance", "Q1"]]
    assert rows[1][2] == "warning"
    assert rows[1][6] == "ALTER QLOCAL(Q1) PUT(ENABLED) on QM4 once it should take messages again"
    empty = Answer("lint", "", "")
    lint_answer(empty, [])
    assert empty.lines[0].startswith("No findings") and not empty.tables[0][1].rows


# -- what changed ------------------------------------------------------------------------------------------------------
def history_row(kind: str, attrs: dict, valid_from: datetime, valid_to: datetime | None = None) -> dict:
    """A silver.config_history row of QM1 (its object_key the ingest's, clwl/engine/view.py record_identity)."""
    key = "|".join(str(p) for p in record_identity(MqscRecord(kind, attrs, "", 0)))
    return {"observing_qmgr": "QM1", "kind": kind, "object_key": key, "attrs": attrs, "valid_from": valid_from,
            "valid_to": valid_to, "source_file": f"{valid_from:%Y-%m-%d}/QM1/config_{valid_from:%H%M%S}.mqsc"}


def clusqmgr(qmgr: str, weight: int = 50, deftype: str = "CLUSSDRA", altered: str = "00.00.00") -> dict:
    return {"CLUSQMGR": qmgr, "CHANNEL": f"TO.{qmgr}", "CLUSTER": "CL1", "CLWLPRTY": "0", "CLWLRANK": "0",
            "CLWLWGHT": str(weight), "DEFTYPE": deftype, "QMID": f"{qmgr}_1", "SUSPEND": "NO",
            "ALTDATE": "2026-11-20" if altered != "00.00.00" else "2024-01-01", "ALTTIME": altered}


def qcluster(host: str) -> dict:
    return {"QUEUE": "APP.Q", "TYPE": "QCLUSTER", "CLUSQMGR": host, "CLUSQT": "QLOCAL", "CLUSTER": "CL1",
            "CLWLPRTY": "0", "CLWLRANK": "0", "DEFBIND": "NOTFIXED", "PUT": "ENABLED", "QMID": f"{host}_1"}


def test_the_changes_and_their_effect_on_the_shares():
    """QM1 (captured 2026-11-19 06:00 and 2026-11-20 09:00): APP.Q on QM2 and QM3, TO.QM2's CLWLWGHT 50 -> 80
    (altered 08:55, seen at 09:00). Step 12's shares (weight over total): 50/100 each before, then QM2 80/130 =
    61.5 % and QM3 50/130 = 38.5 %: one change, one effect."""
    base = at(6, day=19)
    rows = [history_row("QMGR", {"QMNAME": "QM1", "CLWLMRUC": "999999999", "CLWLUSEQ": "LOCAL"}, base),
            history_row("CLUSQMGR", clusqmgr("QM1", deftype="CLUSRCVR"), base),
            history_row("CLUSQMGR", clusqmgr("QM2"), base, at(9)),
            history_row("CLUSQMGR", clusqmgr("QM2", 80, altered="08.55.00"), at(9)),
            history_row("CLUSQMGR", clusqmgr("QM3"), base),
            history_row("QCLUSTER", qcluster("QM2"), base), history_row("QCLUSTER", qcluster("QM3"), base)]
    ans = Answer("drift", "", "")
    drift_answer(ans, drift_from_rows(rows, DAY.isoformat(), captures=[("QM1", base), ("QM1", at(9))]))
    assert ans.lines[0] == ("1 change since the end of 2026-11-19, seen on 1 queue manager (QM1); the configured "
                            "shares moved 1 time (per capture, queue manager routing and queue: below).")
    assert "Configuration captures compared: QM1 1." in ans.lines
    assert rows_of(ans, 0) == [["09:00:00", "QM1", "CLUSQMGR QM2 (TO.QM2, CL1)", "CLWLWGHT", "50", "80",
                                "altered 2026-11-20 08:55:00"]]
    assert ans.tables[1][0] == "Effect on the configured shares"
    assert rows_of(ans, 1) == [["09:00:00", "QM1", "APP.Q", "QM2 50.0 %, QM3 50.0 %", "QM2 61.5 %, QM3 38.5 %"]]


# -- blast radius ------------------------------------------------------------------------------------------------------
def test_the_blast_radius_table_and_its_sentences():
    """QM1 (TO.QM2 and TO.QM3 RUNNING all day, weight 50 each; Q1 on QM2 and QM3, Q2 on QM2 only) puts M1 to Q2
    at 10:05 (audit), M2 and M3 to Q1 at 10:10 and 10:15 (orders): the busiest hour is 10:00-11:00 (3 puts).
    The day as it was: M1 -> QM2 (Q2's only instance; TO.QM2's DestSeqFactor 20, the factor is the channel's),
    M2 -> QM3 (0 < 20), M3 -> QM2 (20 = 20, QM2 chosen longer ago).
    QM2 stopped: M1 waits behind TO.QM2 and stays, the only instance (single-instance), released at 11:00 when
    the channel moves again (55 min); M2 and M3 go to QM3 (steps 6-9: RUNNING before STOPPED), so M3 went
    elsewhere. QM3 stopped: M2 goes to QM2 instead (elsewhere), nothing stuck. Each channel case is its queue
    manager's replay (one sender)."""
    def timeline():
        caps = [(T6, set(), parse_mqsc_text(config_capture(
                    "QM1", {"QM2": {}, "QM3": {}}, {"Q1": {"QM2": {}, "QM3": {}}, "Q2": {"QM2": {}}}), "c.mqsc").records),
                (T6, {"CHSTATUS"}, parse_mqsc_text(chstatus_capture(
                    "QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"}), "s.mqsc").records)]
        return timeline_from_captures("QM1", caps)

    events = [PutEvent("M1", at(10, 5), "Q2", open_handle="audit:1:1"),
              PutEvent("M2", at(10, 10), "Q1", open_handle="orders:2:1"),
              PutEvent("M3", at(10, 15), "Q1", open_handle="orders:2:1")]
    ans = Answer("blast", "", "")
    blast_answer(ans, blast_radius_of_events(DAY.isoformat(), {"QM1": timeline()}, {"QM1": events}))
    assert ans.lines[0] == ("The busiest hour: 10:00-11:00 UTC (3 of the day's 3 messages were put then); 4 cases "
                            "stopped (2 queue managers, 2 channels): 2 left messages stuck, 2 only sent messages "
                            "elsewhere, 0 changed nothing; 2 replays (a sender's channels stopped together are "
                            "replayed once, whatever cases share them).")
    assert ans.lines[1] == ("Stopping queue manager QM2 would have left 1 message stuck (queues Q2 1; applications "
                            "audit 1) and sent 1 elsewhere.")
    assert ans.lines[-1] == "Stuck because: single-instance: the only instance of the queue it could go to."
    assert rows_of(ans) == [
        ["queue manager QM2", "all", "1", "1", "single-instance 1", "55m 00s", "-"],
        ["channel TO.QM2", "QM1", "1", "1", "single-instance 1", "55m 00s", "-"],
        ["queue manager QM3", "all", "0", "1", "-", "-", "-"],
        ["channel TO.QM3", "QM1", "0", "1", "-", "-", "-"]]
    assert ans.tables[0][1].rows[0][2][1] == "1.0"  # the counts sort as numbers


# -- empty states: the report stands -------------------------------------------------------------------------------
def sections_of(html: str) -> dict[str, str]:
    """Each of the four sections' text, from its heading to the next h2."""
    out = {}
    for title in TITLES:
        start = html.index(f">{title}</h2>")
        out[title] = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html[start:html.index("<h2", start)]))
    return out


def test_without_a_lake_each_answer_says_so_and_the_report_renders():
    """A Day handed in without a lake and without timelines: lint, drift and blast say
    there is no lake; the even split says why the configuration is missing."""
    rep = build_report(empty_day(configured_note="the configured weights could not be read (boom)"))
    assert [a.title for a in rep.answers] == list(TITLES)
    text = sections_of(render_html(rep))
    for title in ("Configuration findings", "What changed since the previous day", "Across days", "Blast radius"):
        assert "Not available: the report was made without a lake to read it from." in text[title]
    assert "Not available for 2026-11-20: the configured weights could not be read (boom)" in \
        text["Weights for an even split"]
    md = render_md(rep)
    positions = [md.index(f"## {t}\n") for t in TITLES] + [md.index("## Run summary")]
    assert positions == sorted(positions)


def test_a_lake_without_the_tables_gives_each_answers_own_refusal(tmp_path):
    """A lake folder with nothing in it: each answer's own error, one sentence, and the rest of the report."""
    lake = tmp_path / "lake"
    lake.mkdir()
    rep = build_report(empty_day(lake=lake, timelines={"QM1": qm1_timeline()}))
    text = sections_of(render_html(rep))
    assert "Not available for 2026-11-20: " in text["Configuration findings"]
    assert "no silver.config_history table" in text["Configuration findings"]
    assert "no silver.config_history" in text["What changed since the previous day"]
    assert "no silver.message_events in" in text["Blast radius"]
    assert "Not available: " in text["Across days"] and "no run date published" in text["Across days"]
    # No messages replayed that day: nothing to advise, said so.
    assert "already evenly split" in text["Weights for an even split"]
    assert "## Blast radius" in render_md(rep)


def test_a_day_above_the_blast_limit_names_the_command_instead(tmp_path, monkeypatch):
    """The report replays the busiest hour in-process only up to BLAST_MAX_MESSAGES messages (the day's puts are
    held in the driver's memory): one message more than the limit, and the section names `clwl blast` instead of
    reading the lake (the lake here is empty: reading it would have given the no-table refusal)."""
    import pandas as pd

    from clwl.report import advice

    lake = tmp_path / "lake"
    lake.mkdir()
    monkeypatch.setattr(advice, "BLAST_MAX_MESSAGES", 2)
    day = empty_day(lake=lake)
    day.routing_cube = pd.DataFrame({"sending_qmgr": ["QM1"], "queue": ["Q1"], "messages": [3]})
    rep = Report("t", DAY, "run-1", "now")
    advice.blast_section(day, rep)
    (got,) = rep.answers
    assert got.lines == ["Not computed for the report: 3 messages is more than 2; run `clwl blast --date "
                         "2026-11-20` for it."]


def test_a_what_if_report_points_to_the_published_one():
    rep = build_report(empty_day(whatif="w1", overrides={}))
    assert all(a.lines == ["Not repeated in a what-if report: the published report of 2026-11-20 has it."]
               for a in rep.answers)


def test_an_answer_that_fails_costs_its_section_only():
    def boom(ans, lake):
        ans.lines.append("half")
        raise ValueError("damaged")

    q = Question("x", "X", "intro", "note")
    got = answer(q, empty_day(), boom, needs_lake=False)
    assert got.lines == ["Not computed (ValueError: damaged); the rest of the report stands."] and not got.tables


# -- the samples ---------------------------------------------------------------------------------------------------
@pytest.mark.spark
@pytest.mark.slow
def test_the_samples_report_shows_the_four_answers(samples_lake, tmp_path):
    """The samples' 2026-11-20 report (samples/README.md, "The story"), after the channels and before the run
    summary:

    - lint: QM4's APP.ORDERS is PUT(DISABLED) from 17:55 and the day's last captures show it: one finding on QM4,
      seen by QM1 and QM4 (put-disabled-instance);
    - drift: that change is first seen by QM4's 18:00 capture, with MQ's stamp ALTDATE/ALTTIME 2026-11-20 17.55.00;
    - advise: QM5 (206 puts to APP.BILLING that day) routes APP.BILLING to QM2, QM3 and QM4 (QM4 resumed since
      2026-11-19 20:30), TO.QM2 advertising CLWLWGHT(80) since 2026-11-19 11:55 and the others 50: 80/180 =
      44.4 %, 50/180 = 27.8 % each. An even split takes equal weights: TO.QM2 back to 50 gives 33.3 % each;
    - blast: the busiest hour is 13:00-14:00, when QM3's host fails at 13:52 in the day itself; QM3 stopped for
      that hour leaves 18 messages stuck, 15 of them bound on open (orders-batch's session), waiting 56 min in
      the stop and then 3 h more in the day's own outage, until 17:00."""
    from html import unescape

    from clwl.report import Place, write_report

    html_path, md_path = write_report(Place(samples_lake.lake, tmp_path), "2026-11-20", "advice")
    html, md = html_path.read_text(), md_path.read_text()
    text = sections_of(html)
    # One row a finding: qmgr, rule, severity, object, seen_by, then what was seen behind a disclosure (names wrap
    # between their parts, so the text is compared without its blanks).
    findings = "".join(unescape(text["Configuration findings"]).split())
    assert "QM4put-disabled-instancewarningAPP.ORDERS" in findings
    assert "QM4'sinstanceofAPP.ORDERSisPUT(DISABLED)" in findings
    assert "| 18:00:00 | QM4 | QLOCAL APP.ORDERS | PUT | ENABLED | DISABLED | altered 2026-11-20 17:55:00 |" in md
    assert ("| QM5 | APP.BILLING | 206 | QM2 44.4 %, QM3 27.8 %, QM4 27.8 % | TO.QM2 80 → 50 (on QM2) | "
            "QM2 33.3 %, QM3 33.3 %, QM4 33.3 % |") in md
    assert "| queue manager QM3 | all | 18 |" in md and "bind-on-open 15" in text["Blast radius"]
    # the stop's wait (13:03:28 to 14:00) and the day's own outage after it (TO.QM3 RETRYING until the 17:00
    # capture), apart, as `clwl blast` prints them (tests/cli/test_blast_cli.py)
    assert "| 56m 31s | 18 held until 17:00, the longest 3h 00m more |" in md
    assert "The busiest hour: 13:00-14:00 UTC" in text["Blast radius"]
    positions = [md.index("## Channels")] + [md.index(f"## {t}\n") for t in TITLES] + [md.index("## Run summary")]
    assert positions == sorted(positions)

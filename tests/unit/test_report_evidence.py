"""Issue 27 items 4, 5, 7 and 9 on hand-made days: the one picture (messages waiting per channel, incidents and
the evidence marked), what the report could not see, numbers that reconcile across sections, and tables that fit
1400 px with their headers in view."""

from __future__ import annotations

import datetime as dt
import re

import pandas as pd

from clwl.analyses.incidents import Delay
from clwl.report.build import TEMPLATES, build_report, render_html, render_md
from clwl.report.channels import channel_intervals, channel_trouble, chstatus_day_gaps, evidence_findings
from clwl.report.distribution import chart_counts, distribution_note
from clwl.report.incidents import waiting_steps
from clwl.report.model import PAGE_PX, Day, Seen, estimated_width
from clwl.report.read import combine
from clwl.report.stuck import stuck_section

DAY = dt.date(2026, 11, 20)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def at(h: int, m: int = 0) -> pd.Timestamp:
    return pd.Timestamp(2026, 11, 20, h, m, tz="UTC")


def stuck_row(msg: str, sender: str, channel: str, held: pd.Timestamp, seconds: float, **kw) -> dict:
    return dict(sending_qmgr=sender, msg_id=msg, queue="APP.BILLING", qmgr=channel[3:], channel=channel,
                xmitq="SYSTEM.CLUSTER.TRANSMIT.QUEUE", channel_state="RETRYING", held_from=held,
                released_at=held + pd.Timedelta(seconds=seconds), age_seconds=seconds, why="not-reallocatable",
                detail="bind-on-open; the handle was opened with MQOO_BIND_ON_OPEN", observed_on_xmitq=False) | kw


def status_rows() -> pd.DataFrame:
    """QM5 TO.QM3 as in the samples: RETRYING 10:00-12:00 and 14:00-17:00, RUNNING between and after."""
    rows = [("RUNNING", at(6), at(10)), ("RETRYING", at(10), at(12)), ("RUNNING", at(12), at(14)),
            ("RETRYING", at(14), at(17)), ("RUNNING", at(17), None)]
    return pd.DataFrame([dict(observing_qmgr="QM5", channel="TO.QM3", chltype="CLUSSDR", status=s, valid_from=a,
                              valid_to=b) for s, a, b in rows])


def day(**kw) -> Day:
    base = dict(routing_cube=combine([]), stuck=pd.DataFrame(), distribution=pd.DataFrame(),
                run_summary=pd.DataFrame())
    return Day(DAY, "run-1", **(base | kw))


# ---------------------------------------------------------------------------------------------- item 7


def test_each_trouble_window_shows_its_own_stuck_count():
    """Two RETRYING windows of QM5 TO.QM3. Stuck: 2 held at 10:20 and 10:30 until 12:00 (inside the first), 3 held
    from 14:05 to 17:00 (the second), 1 held at 13:55 for 1:35 (to 15:30: 5 min before the second window, 90 min
    in it: the second), 1 held at 12:30 for 20 min (RUNNING: in no window). The channel total, 7, is on neither
    window: 2 and 4, and 1 outside."""
    stuck = pd.DataFrame([stuck_row("A", "QM5", "TO.QM3", at(10, 20), 6000), stuck_row("B", "QM5", "TO.QM3",
                                                                                        at(10, 30), 5400)]
                         + [stuck_row(f"C{i}", "QM5", "TO.QM3", at(14, 5), 10500) for i in range(3)]
                         + [stuck_row("D", "QM5", "TO.QM3", at(13, 55), 5700),
                            stuck_row("E", "QM5", "TO.QM3", at(12, 30), 1200)])
    intervals, _ = channel_intervals(status_rows(), DAY)
    trouble, _ = channel_trouble(intervals, stuck)
    assert list(zip(trouble["start"], trouble["stuck"])) == [(at(10), 2), (at(14), 4)]
    assert trouble.attrs["outside"] == {("QM5", "TO.QM3"): 1}


def test_a_chart_counts_what_its_comparison_covers_and_says_the_days_count_beside_it():
    """QM3's accounting rows count 64 of APP.ORDERS (two intervals, 30 + 34) while the replay sent it 76 over the
    day (the cube, QM1 50 + QM5 26): the chart's replayed bar is 64 "of 76", and the note names both."""
    dist = pd.DataFrame([dict(sending_qmgr="*", queue="APP.ORDERS", interval_start=at(h), interval_end=at(h + 1),
                              qmgr="QM3", expected=n, observed=n, verdict="expected", source="accounting")
                         for h, n in ((9, 30), (10, 34))])
    cube = pd.DataFrame([dict(sending_qmgr=s, queue="APP.ORDERS", final_qmgr="QM3", messages=n)
                         for s, n in (("QM1", 50), ("QM5", 26))])
    counts = chart_counts(dist, "APP.ORDERS", "accounting", cube)
    assert counts.loc["QM3", "expected"] == 64 and counts.loc["QM3", "day"] == 76
    assert "APP.ORDERS (accounting): QM3 64 of 76 (delivered within its accounting intervals)" in \
        distribution_note(dist, cube)
    cube.loc[1, "messages"] = 14  # 50 + 14 = 64: nothing to say
    assert distribution_note(dist, cube) == ""


# ---------------------------------------------------------------------------------------------- item 5


def test_the_report_says_what_it_could_not_see():
    """QM4 puts from 09:00 to 17:00 with captures at 06:00 and 18:00 (720 min apart, as in the samples); QM2 puts
    without any capture (its whole day unseen); QM3 hosts APP.Q without queue accounting; 3 records quarantined
    from two files."""
    from clwl.engine.model import ClusterChannel, ClusterView, QmgrAttributes, QueueInstance
    from clwl.engine.replay import Snapshot

    v = ClusterView(QmgrAttributes("QM4"), channels=(ClusterChannel("TO.QM3", "QM3", frozenset({"C"})),),
                    instances=(QueueInstance("APP.Q", "QM3", frozenset({"C"})),))
    seen = Seen(chstatus={"QM4": [at(6).to_pydatetime(), at(18).to_pydatetime()]},
                puts={"QM4": (at(9).to_pydatetime(), at(17).to_pydatetime()),
                      "QM2": (at(9).to_pydatetime(), at(10).to_pydatetime())},
                accounting={"QM4"},
                quarantine=pd.DataFrame([("2026-11-20/QM1/puts.csv", "record", "bad hex", 2),
                                         ("2026-11-20/QM3/config_140000.mqsc", "file", "not runmqsc output", 1)],
                                        columns=["source_file", "level", "reason", "records"]))
    d = day(seen=seen, timelines={"QM4": [Snapshot(at(6).to_pydatetime(), v)]})
    found = evidence_findings(d, chstatus_day_gaps(d))
    text = " ".join(found)
    assert "QM4: no channel status capture from 06:00:00 to 18:00:00 (720 min)" in text
    assert "QM2 put messages but has no channel status capture on 2026-11-20" in text
    assert "QM3 hosts APP.Q (seen in the configuration of QM4) but has no queue accounting" in text
    assert "3 records quarantined from 2 files: 2026-11-20/QM1/puts.csv (2: bad hex)" in text
    gaps = chstatus_day_gaps(d)
    assert [(g.qmgr, [(u.start, u.end) for u in g.unseen]) for g in gaps] == [
        ("QM2", [(at(0).to_pydatetime(), at(0).to_pydatetime() + dt.timedelta(days=1))]),
        ("QM4", [(at(6).to_pydatetime(), at(18).to_pydatetime())])]
    # rendered in the findings, the quarantined records behind a disclosure
    rep = build_report(d)
    html = render_html(rep)
    assert "What the report could not see" in html and 'id="quarantine"' in html
    assert "### What the report could not see" in render_md(rep)


def test_coverage_not_read_is_said_not_taken_for_a_healthy_day():
    assert "could not be read" in evidence_findings(day(), [])[0]
    assert evidence_findings(day(seen=Seen(accounting=set())), [])[0].startswith("Nothing missing")


# ---------------------------------------------------------------------------------------------- item 4


def test_messages_waiting_per_channel_step_up_and_down_with_the_replays_held_and_released_times():
    """Two messages wait behind QM5 TO.QM3 from 10:00 and 10:30, released at 12:00 (7200 s and 5400 s); one
    stuck behind QM1 TO.QM3 from 23:00 with no known end: waits to the end of the day."""
    delays = [Delay("QM5", "TO.QM3", "A", "Q", at(10).to_pydatetime(), 7200.0, stuck=True),
              Delay("QM5", "TO.QM3", "B", "Q", at(10, 30).to_pydatetime(), 5400.0, stuck=True),
              Delay("QM1", "TO.QM3", "C", "Q", at(23).to_pydatetime(), None, stuck=True)]
    steps = waiting_steps(delays, DAY)
    assert steps["QM5 \u2192 TO.QM3"] == [(at(0), 0), (at(10), 1), (at(10, 30), 2), (at(12), 0)]
    assert steps["QM1 \u2192 TO.QM3"] == [(at(0), 0), (at(23), 1), (at(0) + pd.Timedelta(days=1), 0)]


def test_the_picture_opens_the_findings_and_the_stuck_rows_sit_behind_disclosures():
    stuck = pd.DataFrame([stuck_row("MSG-0001-AAAA-BBBB-CCCC", "QM5", "TO.QM3", at(10, 20), 6000)])
    d = day(stuck=stuck, channel_status=status_rows(),
            seen=Seen(chstatus={"QM5": [at(6).to_pydatetime(), at(10).to_pydatetime()]},
                      puts={"QM5": (at(10).to_pydatetime(), at(16).to_pydatetime())}, accounting=set()))
    rep = build_report(d)
    assert rep.picture is not None and rep.picture.png.startswith(PNG_MAGIC)
    html = render_html(rep)
    findings = html[html.index('id="findings"'):html.index("</section>")]
    assert findings.index(rep.picture.alt) < findings.index("Incidents: where to look")
    assert "[1]" in findings  # the incidents numbered as in the picture
    stuck_part = html[html.index('id="stuck"'):html.index('id="distribution"')]
    assert stuck_part.index("<details><summary>The 1 groups") < stuck_part.index('id="stuck-groups"')


def _png_size(png: bytes) -> tuple[int, int]:
    # PNG: the IHDR chunk follows the 8-byte signature; width and height are its first two big-endian words
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def test_a_healthy_day_draws_no_empty_waiting_panel_and_a_troubled_day_keeps_it():
    """Issue 39 item 6: a healthy day opens with its all-clear sentence, not an empty chart. Same captures (QM5 at
    06:00 and 10:00, puts 10:00-16:00) on both days; the healthy day has no stuck row, so its picture is the
    capture strip alone (1.2 in plus 0.28 in per queue manager: under half the troubled day's 4.2 + 0.28), and the
    troubled day (one message stuck behind QM5 TO.QM3 from 10:20) keeps the waiting panel above it."""
    seen = Seen(chstatus={"QM5": [at(6).to_pydatetime(), at(10).to_pydatetime()]},
                puts={"QM5": (at(10).to_pydatetime(), at(16).to_pydatetime())}, accounting=set())
    healthy = build_report(day(channel_status=status_rows().iloc[:1], seen=seen))
    troubled = build_report(day(stuck=pd.DataFrame([stuck_row("M1", "QM5", "TO.QM3", at(10, 20), 6000)]),
                                channel_status=status_rows(), seen=seen))
    (w1, h1), (w2, h2) = _png_size(healthy.picture.png), _png_size(troubled.picture.png)
    assert w1 == w2 and h1 < h2 / 2
    findings = render_html(healthy)
    findings = findings[findings.index('id="findings"'):]
    assert findings.index("No channel trouble on 2026-11-20") < findings.index(healthy.picture.alt)


# ---------------------------------------------------------------------------------------------- item 9


def test_the_stuck_and_share_tables_fit_1400_px_with_short_ids_and_sticky_headers():
    """25 stuck groups with long reasons, remedies and message ids: the estimate of the CSS's widths stays within
    the page; ids are short with the whole id in a copy button; headers stick while the table scrolls."""
    stuck = pd.DataFrame([stuck_row(f"414D5120514D35202020202020202020{i:032X}", "QM5", "TO.QM3", at(10, i),
                                    3600 + i, detail="bind-on-open; " + "a long explanation " * 10)
                          for i in range(25)])
    d = day(stuck=stuck)
    rep = build_report(d)
    stuck_section(d, rep)
    for t in (rep.stuck_groups, rep.stuck_rows):
        assert estimated_width(t) <= PAGE_PX, (t.id, estimated_width(t))
    html = render_html(rep)
    assert re.search(r'<span class="id" title="414D5120514D3520[0-9A-F]+">414D5120\u2026</span><button type="button" '
                     r'class="copy" data-copy="414D5120514D3520', html)
    css = (TEMPLATES / "report.html.j2").read_text()
    assert re.search(r"th\{[^}]*position:sticky;top:0", css)
    # sticky works against the wrapper that scrolls: it must scroll both ways, with a bounded height
    assert re.search(r"\.tablewrap\{[^}]*max-height:[^;]+;overflow:auto", css)

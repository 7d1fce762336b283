"""The samples' 2026-11-20 report, rendered from the published samples lake (the session's ``samples_lake``): its
first screen names the day's two incidents with their side, the applications and what to do.

The samples' 2026-11-20 (samples/landing): QM5's three workload channels TO.QM2, TO.QM3 and TO.QM4 go RETRYING at
10:00 (back 11:00, 12:00, 12:00) while its channel to the full repository FR1 keeps running: every channel its
messages use failed together, and no other sender lost QM2, QM3 or QM4 then (QM1's channels to them were INACTIVE
or RUNNING): rule 2, one incident at QM5's side, 10:00-12:00. From 14:00 to 17:00 both QM1 and QM5 see TO.QM3
RETRYING, and a 15:30 browse found messages put from 13:52 on the transmission queues: two senders, one receiver,
overlapping windows: rule 3, one incident at QM3, 13:52-17:00 (docs/diagnosis.md)."""

from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_the_first_screen_names_both_incidents_their_side_the_applications_and_what_to_do(samples_lake, tmp_path):
    from clwl.report import Place, write_report

    html_path, md_path = write_report(Place(samples_lake.lake, tmp_path), "2026-11-20", "diagnosis")
    html = html_path.read_text()
    findings = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html[html.index("<h2>Findings</h2>"):
                                                                html.index("<h3>What is stuck</h3>")]))
    findings = findings.replace("&#39;", "'")
    assert "2 incidents on 2026-11-20:" in findings
    assert "QM5 lost all 3 cluster channels at 10:00 (10:00–12:00, to QM2, QM3 and QM4): look at QM5's side" \
        in findings
    assert "QM3 unreachable from QM1 and QM5, 13:52–17:00: look at QM3: its listener, host, or the network to it" \
        in findings
    for app in ("orders-batch", "billing-batch", "billing-svc"):
        assert app in findings
    assert "Why they stayed, and what to do: bind on open" in findings and "MQOO_BIND_NOT_FIXED" in findings
    md = md_path.read_text()
    assert md.index("### Incidents: where to look") < md.index("### What is stuck")
    assert "QM3 unreachable from QM1 and QM5, 13:52–17:00" in md

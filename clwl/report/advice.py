"""The four answers of issue 28 as sections of the report, after the day's facts and before the run summary:

- **Configuration findings**: :func:`clwl.analyses.lint_lake.lint_lake` for the run date (docs/lint.md);
- **What changed since the previous day**: :func:`clwl.analyses.drift.drift`, its changes and what they did to the
  configured shares (docs/drift.md);
- **Weights for an even split**: :func:`clwl.analyses.advise.advise` on the configuration at the end of the day (the
  timelines the Day already holds), for each sending queue manager and cluster queue that had messages and whose
  configured shares are not even across its hosting queue managers (docs/advise.md);
- **Blast radius**: :func:`clwl.analyses.blast.blast_radius`, the first rows of its table (docs/blast.md).

Each section reads through the answer's own function (nothing here reads the lake itself) and fills one
:class:`Answer` of ``Report.answers``. An answer that cannot be given (no such table, no captures of the date, a
damaged table) is one sentence saying why; the rest of the report stands.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional

import pandas as pd

from clwl.analyses.advise import Advice, AdviseError, advise, cluster_queue, other_senders
from clwl.analyses.blast import (
    REASON_WORDS,
    STUCK_REASONS,
    TABLE_HEADER,
    BlastError,
    BlastRadius,
    blast_radius,
    case_counts,
    case_label,
    table_rows,
    top,
)
from clwl.analyses.drift import Drift, DriftError, drift
from clwl.analyses.lint import RULE_NAMES, Finding, LintInputError
from clwl.analyses.lint_lake import lint_lake
from clwl.engine.model import ClusterView
from clwl.engine.replay import Snapshot
from clwl.report.model import Chart, Day, Report, TableView, table_view

log = logging.getLogger(__name__)

#: The answers' own refusals: what they say is the empty state's sentence.
ANSWER_ERRORS = (LintInputError, DriftError, AdviseError, BlastError)

MAX_ADVICE_ROWS = 10  # sending queue manager and queue pairs shown in the even split; the busiest first
MAX_BLAST_ROWS = 10  # cases shown; the most stuck first
MAX_BLAST_SENTENCES = 3  # cases told in a sentence, with their queues and applications
#: Shares this close to 100/n (percentage points) are even: the engine's counted shares are multiples of 0.1.
EVEN_TOLERANCE = 0.1


@dataclass
class Answer:
    """One section as the templates show it: its heading, what it answers, its sentences (each with its numbers),
    its tables (caption, table) and its limits with the command that has every detail."""

    id: str
    title: str
    intro: str
    lines: list[str] = field(default_factory=list)
    tables: list[tuple[str, TableView]] = field(default_factory=list)
    note: str = ""
    charts: list[Chart] = field(default_factory=list)  # pictures after the sentences (Across days' small multiples)


@dataclass(frozen=True)
class Question:
    """What a section asks: its anchor, heading, what it answers and its limits."""

    id: str
    title: str
    intro: str
    note: str


LINT = Question(
    "lint", "Configuration findings",
    "What MQ will do with the configuration captured on this day that an administrator may not expect: every "
    "queue manager's last configuration of the day, the rules of clwl lint (docs/lint.md), each finding once, on "
    "the queue manager its object belongs to, with who sees it, what MQ will do and the remedy in MQ's terms.",
    "From the captures alone: a rule that needs something the captures do not show says nothing. "
    "clwl lint --lake LAKE --date DATE --json has the same findings.")
DRIFT = Question(
    "drift", "What changed since the previous day",
    "Every configuration change this day's captures showed, against the configuration in force at the end of "
    "the day before, per observing queue manager: the object, the attribute, its old and new value, the capture "
    "that first showed it (UTC) and MQ's own stamp (the queue manager's clock); then what each change did to the "
    "configured shares (the engine, every channel running).",
    "Between two captures only the net result shows: a value changed and changed back is not seen, and a change "
    "is seen at the first capture that shows it (MQ's stamp is closer to when it was made). Stamps and runtime "
    "counters are not compared (docs/drift.md). "
    "clwl drift --date DATE --since EARLIER compares with any earlier day.")
EVEN_SPLIT = Question(
    "even-split", "Weights for an even split",
    "For each sending queue manager and cluster queue that had messages this day and whose configured shares are "
    "not even across the queue managers hosting it: the CLWLWGHT values clwl advise proposes for an even split, "
    "the shares the engine computes with them (every channel running, the configuration at the end of the day), "
    "and what weights cannot do. The even split (100/n % for each of the n hosts, in hundredths adding up to "
    "100) is the target chosen for the report; clwl advise --target takes any other.",
    "Weights only share out what step 12 decides: a destination eliminated before it (PUT(DISABLED), rank, "
    "priority, a local instance chosen at step 3) is named with what to change instead. The commands are to "
    "review, never applied; a weight belongs to a channel and a cluster receiver advertises it to every sender, so the "
    "other queues over it move too, this sender's and the other queue managers' (also_moves; docs/advise.md).")
BLAST = Question(
    "blast", "Blast radius",
    "Each queue manager and each cluster-sender channel STOPPED for the day's busiest hour, the day's own traffic "
    "replayed: the messages that would have been stuck behind it (and why they could not go elsewhere) and those "
    "that would simply have gone elsewhere. The top rows are the estate's single points of failure.",
    "One hour, at the busiest hour, of this day's traffic; what the captures do not show (consumers, queue "
    "depths, a queue manager's own applications) is not replayed (docs/blast.md). "
    "clwl blast --date DATE --json has every case, queue and application.")


def plural(n: int, one: str, many: Optional[str] = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def lake_of(day: Day) -> Optional[Path]:
    """The lake the Day's silver tables were read from (None: a Day handed in without one)."""
    return day.lake


def answer(question: Question, day: Day, fill: Callable[[Answer, Path], None], *, needs_lake: bool = True) -> Answer:
    """The section's Answer, ``fill`` giving its findings from the lake; its empty state when it cannot be given."""
    ans = Answer(question.id, question.title, question.intro, note=question.note)
    if day.whatif:  # the four answers are the published estate's: the what-if changes none of lint, drift, blast
        ans.lines = [f"Not repeated in a what-if report: the published report of {day.run_date.isoformat()} has it."]
        return ans
    lake = lake_of(day)
    if needs_lake and lake is None:
        ans.lines = ["Not available: the report was made without a lake to read it from."]
        return ans
    try:
        fill(ans, lake)
    except ANSWER_ERRORS as e:
        ans.lines, ans.tables = [f"Not available for {day.run_date.isoformat()}: {e}"], []
    except Exception as e:  # one answer lost, not the report: the same as gather's optional reads
        log.warning("report: %s not computed: %s", question.title, e)
        ans.lines, ans.tables = [f"Not computed ({type(e).__name__}: {e}); the rest of the report stands."], []
    return ans


# -- configuration findings -----------------------------------------------------------------------------------
LINT_COLS = ("qmgr", "rule", "severity", "object", "seen_by", "detail", "remedy")


def lint_answer(ans: Answer, findings: list[Finding]) -> None:
    """The findings: a count per rule, then the table (the queue manager the object belongs to, rule, severity,
    object, the queue managers whose captures show it, what MQ will do,
    the remedy), in the order clwl lint prints them."""
    if not findings:
        ans.lines.append("No findings: no rule of clwl lint applies to the configuration captured this day.")
    else:
        by_rule = Counter(f.rule for f in findings)
        qmgrs = sorted({f.qmgr for f in findings})
        per_rule = ", ".join(f"{rule} {by_rule[rule]}" for rule in RULE_NAMES if by_rule[rule])
        ans.lines.append(f"{plural(len(findings), 'finding')} on {plural(len(qmgrs), 'queue manager')} "
                         f"({', '.join(qmgrs)}): {per_rule}.")
    frame = pd.DataFrame([{**f.as_dict(), "seen_by": ", ".join(f.seen_by)} for f in findings], columns=list(LINT_COLS))
    # One row a finding, readable in one screen: what was seen and the remedy behind disclosures.
    ans.tables.append(("", table_view("lint-findings", frame, LINT_COLS, "No findings.", wrap=("object", "seen_by"),
                                      details=("detail", "remedy"))))


def lint_section(day: Day, rep: Report) -> None:
    """Configuration findings of the run date (clwl lint)."""
    rep.answers.append(answer(LINT, day, lambda ans, lake: lint_answer(ans, lint_lake(lake, day.run_date.isoformat()))))


# -- what changed ------------------------------------------------------------------------------------------------
CHANGE_COLS = ("captured", "qmgr", "object", "attribute", "old", "new", "mq_stamp")
EFFECT_COLS = ("captured", "routed_from", "queue", "before", "after")
NO_DESTINATION = "none: the put fails"


def _clock(iso: str) -> str:
    return pd.Timestamp(iso).strftime("%H:%M:%S")


def _shares_text(shares: Mapping[str, float], names: Iterable[str]) -> str:
    """Every destination's share, ``QM1 33.3 %, QM2 66.7 %``; no destination at all: the put fails."""
    if not shares:
        return NO_DESTINATION
    return ", ".join(f"{q} {shares.get(q, 0.0):.1f} %" for q in names)


def drift_answer(ans: Answer, found: Drift) -> None:
    """The changes (Drift.rows) and, per capture, sending queue manager and queue, the configured shares before
    and after (Drift.effects)."""
    changed = sorted({c.qmgr for c in found.changes})
    if found.changes:
        moved = {(e.at, e.qmgr, e.queue) for e in found.effects}
        ans.lines.append(
            f"{plural(len(found.changes), 'change')} since the end of {found.since}, seen on "
            f"{plural(len(changed), 'queue manager')} ({', '.join(changed)})"
            + (f"; the configured shares moved {plural(len(moved), 'time')} (per capture, queue manager routing "
               "and queue: below)." if moved else "; no configured share moved."))
    else:
        ans.lines.append(f"No configuration change since the end of {found.since}.")
    for qmgr, t in sorted(found.first_captured.items()):
        ans.lines.append(f"{qmgr}: first captured at {t:%H:%M:%S} UTC, nothing earlier to compare with: compared "
                         "from that capture on.")
    if found.captures is not None:
        ans.lines.append("Configuration captures compared: "
                         + ", ".join(f"{q} {n}" for q, n in found.captures.items()) + ".")
    changes = pd.DataFrame([{**r, "captured": _clock(r["at"]), "mq_stamp": r["stamp"] or "",
                             "old": r["old"] if r["old"] != "" else "(blank)",
                             "new": r["new"] if r["new"] != "" else "(blank)"} for r in found.rows()],
                           columns=[*CHANGE_COLS])
    ans.tables.append(("Changes", table_view("drift-changes", changes, CHANGE_COLS,
                                             f"No configuration change since the end of {found.since}.",
                                             wrap=("object",))))
    if found.changes or found.effects:
        effects = pd.DataFrame([{"captured": f"{e.at:%H:%M:%S}", "routed_from": e.qmgr, "queue": e.queue,
                                 "before": _shares_text(e.before, [q for q, _, _ in e.destinations()]),
                                 "after": _shares_text(e.after, [q for q, _, _ in e.destinations()])}
                                for e in found.effects], columns=[*EFFECT_COLS])
        ans.tables.append(("Effect on the configured shares", table_view(
            "drift-effects", effects, EFFECT_COLS, "No configured share changed.", wrap=("before", "after"))))


def drift_section(day: Day, rep: Report) -> None:
    """The run date's configuration changes against the end of the day before (clwl drift)."""
    rep.answers.append(answer(DRIFT, day, lambda ans, lake: drift_answer(
        ans, drift(lake, day.run_date.isoformat(), profile=day.profile))))


# -- weights for an even split -----------------------------------------------------------------------------------
ADVICE_COLS = ("sending_qmgr", "queue", "messages", "configured", "proposed_clwlwght", "achieved", "blocked",
               "also_moves")


def even_target(hosts: Iterable[str]) -> dict[str, float]:
    """100/n % for each of the n hosts, in hundredths adding up to exactly 100 (the first by name take the odd
    hundredths: 33.34, 33.33, 33.33)."""
    names = sorted(set(hosts))
    base, extra = divmod(10000, len(names))
    return {q: (base + (1 if i < extra else 0)) / 100 for i, q in enumerate(names)}


def is_even(shares: Mapping[str, float], hosts: Iterable[str]) -> bool:
    names = sorted(set(hosts))
    return all(abs(shares.get(q, 0.0) - 100.0 / len(names)) <= EVEN_TOLERANCE for q in names)


def view_at_end(timeline: Optional[list[Snapshot]], run_date: dt.date) -> Optional[ClusterView]:
    """The configuration in force at the end of the run date (the report's configured shares are of it too)."""
    end = pd.Timestamp(run_date, tz="UTC") + pd.Timedelta(days=1)
    snaps = [s for s in timeline or () if pd.Timestamp(s.time) < end]
    return max(snaps, key=lambda s: s.time).view if snaps else None


@dataclass
class EvenSplit:
    """The even-split advice of a day: the (sending queue manager, cluster queue, messages, advice) not already
    even, busiest first; and the pairs left out, with why."""

    advised: list[tuple[str, str, int, Advice]] = field(default_factory=list)
    even: list[str] = field(default_factory=list)  # "QM1 APP.AUDIT": already even (or one host)
    unknown: list[str] = field(default_factory=list)  # no configuration, or not a cluster queue the sender knows


def messages_per_queue(cube: pd.DataFrame) -> list[tuple[str, str, int]]:
    """(sending queue manager, queue, messages) of the day's replay, busiest first."""
    if cube.empty:
        return []
    per = cube.groupby(["sending_qmgr", "queue"])["messages"].sum().reset_index()
    per = per.sort_values(["messages", "sending_qmgr", "queue"], ascending=[False, True, True])
    return [(s, q, int(n)) for s, q, n in zip(per["sending_qmgr"], per["queue"], per["messages"])]


def even_split(timelines: Mapping[str, list[Snapshot]], traffic: Iterable[tuple[str, str, int]],
               run_date: dt.date, profile: str = "default") -> EvenSplit:
    """clwl advise's proposal for an even split of each (sender, queue) of ``traffic`` whose configured shares,
    at the end of the run date, are not already even across the queue's hosts. A local alias counts as the
    cluster queue it resolves to (its messages added to the queue's)."""
    out = EvenSplit()
    counted: dict[tuple[str, str], int] = {}
    views: dict[str, Optional[ClusterView]] = {}
    for sender, queue, n in traffic:
        if sender not in views:
            views[sender] = view_at_end(timelines.get(sender), run_date)
        view = views[sender]
        try:
            if view is None:
                raise AdviseError(f"no configuration of {sender}")
            name = cluster_queue(view, queue)
        except AdviseError:
            out.unknown.append(f"{sender} {queue}")
            continue
        counted[(sender, name)] = counted.get((sender, name), 0) + n
    for (sender, name), n in sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])):
        view = views[sender]
        hosts = sorted({i.qmgr for i in view.instances_of(name)})
        if len(hosts) < 2:
            out.even.append(f"{sender} {name}")
            continue
        advice = advise(view, name, even_target(hosts), profile)
        if is_even(advice.current, hosts):
            out.even.append(f"{sender} {name}")
        else:
            out.advised.append((sender, name, n, advice))
    # Who else moves (the rows shown): a receiver's weight is what every sender sees, so each other queue manager's
    # configuration at the end of the day is asked too.
    for sender, _, _, advice in out.advised[:MAX_ADVICE_ROWS]:
        for other in timelines:
            if other != sender and other not in views:
                views[other] = view_at_end(timelines.get(other), run_date)
        others = {q: v for q, v in views.items() if q != sender and v is not None}
        advice.other_senders = other_senders(others, advice.receiver_weights(), profile)
        advice.other_senders_from = "the configuration of the day's other queue managers at its end"
    return out


def _proposal_text(advice: Advice) -> str:
    if not advice.changes:
        return "no change"
    return ", ".join(f"{w.channel} {w.current} → {w.clwlwght} (on {w.owner})" for w in advice.changes)


def _also_moves(advice: Advice) -> str:
    """The sender's other queues whose shares change, then every other sender's ("QM5 APP.BILLING")."""
    parts = [s.queue for s in advice.side_effects]
    parts += [f"{e.sender} {e.queue}" for e in advice.other_senders or ()]
    return ", ".join(parts) or "no other queue"


def _blocked_text(advice: Advice) -> str:
    parts = [f"{b.qmgr or 'every destination'} (step {b.step}): {b.cause}; instead: {b.remedy}"
             for b in advice.blocked]
    return "; ".join([*parts, *advice.notes]) or "nothing"


def even_split_answer(ans: Answer, split: EvenSplit, run_date: dt.date) -> None:
    """The busiest pairs' proposals (at most MAX_ADVICE_ROWS), and the pairs left out."""
    rows = []
    for sender, queue, n, advice in split.advised:
        names = advice.destinations
        rows.append({"sending_qmgr": sender, "queue": queue, "messages": n,
                     "configured": _shares_text(advice.current, names),
                     "proposed_clwlwght": _proposal_text(advice), "achieved": _shares_text(advice.achieved, names),
                     "blocked": _blocked_text(advice),
                     "also_moves": _also_moves(advice)})
    if split.advised:
        shown = min(len(rows), MAX_ADVICE_ROWS)
        pairs = plural(len(rows), "sending queue manager and queue", "sending queue manager and queue pairs")
        ans.lines.append(f"Not evenly split on {run_date.isoformat()}: {pairs}"
                         + (f"; the {shown} with the most messages below." if len(rows) > shown else ", below."))
    else:
        ans.lines.append(f"Every sending queue manager and cluster queue of {run_date.isoformat()} with messages is "
                         "already evenly split across its hosts (or has one host): nothing to propose.")
    if split.even:
        ans.lines.append(f"Already even, or one host: {', '.join(split.even)}.")
    if split.unknown:
        ans.lines.append(f"Not advised (no configuration of the sender, or not a cluster queue it knows): "
                         f"{', '.join(split.unknown)}.")
    frame = pd.DataFrame(rows, columns=list(ADVICE_COLS))
    ans.tables.append(("", table_view("even-split-weights", frame, ADVICE_COLS, "Nothing to propose.",
                                      wrap=("configured", "proposed_clwlwght", "achieved", "blocked"),
                                      limit=MAX_ADVICE_ROWS)))


def even_split_section(day: Day, rep: Report) -> None:
    """clwl advise's weights for an even split, on the day's configuration (the timelines the Day holds)."""

    def fill(ans: Answer, _lake) -> None:
        if day.timelines is None:
            raise AdviseError(day.configured_note or "the configuration timelines were not read")
        even_split_answer(ans, even_split(day.timelines, messages_per_queue(day.routing_cube), day.run_date,
                                          day.profile), day.run_date)

    rep.answers.append(answer(EVEN_SPLIT, day, fill, needs_lake=False))


# -- blast radius --------------------------------------------------------------------------------------------------
BLAST_COLS = TABLE_HEADER  # clwl blast's own table, column for column
_COUNTS = ("stuck", "went elsewhere")  # numbers, so that the table sorts them as numbers


def blast_answer(ans: Answer, radius: BlastRadius) -> None:
    """The hour, the most stuck cases told with their queues and applications, the table's first rows
    (clwl.analyses.blast.table_rows: the cases that stuck or moved something, most stuck first) and the reasons' words."""
    w = radius.window
    ans.lines.append(f"The busiest hour: {w.label} UTC ({w.messages} of the day's {radius.messages} messages were "
                     f"put then); {case_counts(radius)}.")
    stuck = [r for r in radius.cases if r.stuck]
    for r in stuck[:MAX_BLAST_SENTENCES]:
        who = case_label(r) + (f" of {r.case.sender}" if r.case.sender else "")
        ans.lines.append(f"Stopping {who} would have left {plural(r.stuck, 'message')} stuck "
                         f"(queues {top(r.queues, 'stuck')}; applications {top(r.applications, 'stuck')}) and sent "
                         f"{r.reallocated} elsewhere.")
    if not any(r.stuck or r.reallocated for r in radius.cases):
        ans.lines.append("No queue manager or channel stopped for that hour would have stuck or moved a message.")
    elif not stuck:
        ans.lines.append("No stop would have left a message stuck: every message could go elsewhere.")
    header, *body = table_rows(radius)
    frame = pd.DataFrame([dict(zip(header, row)) for row in body], columns=list(header))
    for c in _COUNTS:
        frame[c] = frame[c].astype(int)
    ans.tables.append(("", table_view("blast-cases", frame, BLAST_COLS, "Nothing stuck, nothing moved.",
                                      wrap=("stuck because",), limit=MAX_BLAST_ROWS)))
    seen = [x.key for x in STUCK_REASONS if any(r.by_reason[x.key] for r in radius.cases)]
    if seen:
        ans.lines.append("Stuck because: " + "; ".join(f"{k}: {REASON_WORDS[k]}" for k in seen) + ".")


#: Above this many messages the report leaves the blast radius to `clwl blast`: the in-process replay holds the
#: day's puts in the driver's memory (about 10 s per million messages, docs/blast.md), which a nightly report of a
#: big day should not pay.
BLAST_MAX_MESSAGES = 2_000_000


def blast_section(day: Day, rep: Report) -> None:
    """The blast radius of the run date's busiest hour (clwl blast); for a day of more than BLAST_MAX_MESSAGES
    messages, one sentence naming the command instead."""
    messages = int(day.routing_cube["messages"].sum()) if not day.routing_cube.empty else 0

    def fill(ans: Answer, lake: Path) -> None:
        if messages > BLAST_MAX_MESSAGES:
            ans.lines.append(f"Not computed for the report: {messages:,} messages is more than "
                             f"{BLAST_MAX_MESSAGES:,}; run `clwl blast --date {day.run_date.isoformat()}` for it.")
            return
        blast_answer(ans, blast_radius(lake, day.run_date.isoformat(), day.profile))

    rep.answers.append(answer(BLAST, day, fill))

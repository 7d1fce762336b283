"""``clwl lint``: configuration findings from the captures, once per object (docs/lint.md).

Each rule is a small named function over a :class:`LintContext` (every observing queue manager's view, and the
manual channel definitions it captured), registered once in :data:`RULES` with its name, what MQ will do and
the remedy in MQ's terms. A rule reads what was captured; where the captures do not show what it needs, it says
nothing rather than guessing. MQ's defaults count as values: the view already holds them for attributes a
capture left out (queue CLWLUSEQ(QMGR), queue manager CLWLUSEQ(LOCAL), DEFBIND(OPEN), CLWLMRUC(999999999)). A
finding is placed on the queue manager its object belongs to, with the observers that see it (``seen_by``); where
the day's put records are known (:attr:`LintContext.traffic`), a default no message went through is a notice.

Pure: no Spark, and no lake: :func:`clwl.analyses.lint_lake.lint_lake` reads the lake (the last configuration of
the day of each observing queue manager) and is imported from there.

Where things are: the words the rules share (clwl/analyses/lint_model.py), the rules and :data:`RULES`
(clwl/analyses/lint_rules.py), the lake's half (clwl/analyses/lint_lake.py); this module is the entry point of the
pure half and keeps its names importable from here.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Optional, Sequence

from clwl.analyses.lint_model import (
    NOTICE,
    SEVERITIES,
    WARNING,
    BindDecision,
    ChannelDefinition,
    DayMessage,
    Finding,
    Hit,
    LintContext,
    LintInputError,
    Observation,
    Puts,
    Rule,
    bind_decision,
    count_puts,
    observe,
)
from clwl.analyses.lint_rules import RULE_NAMES, RULES, lint_observations, sort_findings
from clwl.parse.common import MqscRecord

__all__ = ["NOTICE", "SEVERITIES", "WARNING", "BindDecision", "ChannelDefinition", "Finding", "Hit", "LintContext",
           "LintInputError", "Observation", "Puts", "Rule", "RULE_NAMES", "RULES", "bind_decision", "count_puts",
           "observe", "sort_findings", "lint_observations", "lint_captures"]


def lint_captures(records_by_qmgr: Mapping[str, Iterable[MqscRecord]],
                  traffic: Optional[Mapping[tuple[str, str], Puts]] = None, run_date: str = "",
                  messages: Optional[Callable[[str, frozenset[str]], Sequence[DayMessage]]] = None) -> list[Finding]:
    """The findings of queue managers' captures: observing queue manager -> its records (oldest first);
    ``traffic``, ``messages`` and ``run_date``: the day's put records, when known (a landing folder's put files:
    counted, and replayed by the stale-knowledge rules)."""
    return lint_observations((observe(qm, recs) for qm, recs in records_by_qmgr.items()), traffic=traffic,
                             run_date=run_date, messages=messages)


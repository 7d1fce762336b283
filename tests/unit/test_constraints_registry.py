"""The gold tables' CHECK constraints and the change data feed are declared once, in the registry
(clwl/lake/registry.py): docs/tables.md lists exactly those, and each expression names only columns of its table.
No Spark (tests/spark/test_gold_constraints.py has Delta enforce them)."""

from __future__ import annotations

import re
from pathlib import Path

from clwl.lake.registry import SPECS, constraints_in

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tables.md"
# | `gold.table` | `name` | `expression` | why |
_ROW = re.compile(r"^\|\s*`((?:bronze|silver|gold)\.[a-z_]+)`\s*\|\s*`([a-z0-9_]+)`\s*\|\s*`([^`]+)`\s*\|", re.M)
_SQL_WORDS = {"AND", "OR", "NOT", "IS", "NULL", "coalesce", "least"}


def _documented() -> dict[tuple[str, str], str]:
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("### Constraints"):text.index("## What changed between two versions")]
    return {(table, name): expr for table, name, expr in _ROW.findall(section)}


def test_docs_list_exactly_the_registrys_constraints():
    declared = {(key, name): expr for key, t in SPECS.items() for name, expr in t.checks}
    assert _documented() == declared


def test_every_gold_table_has_constraints_and_its_keys_checked():
    for key, t in SPECS.items():
        assert bool(t.checks) == (t.layer == "gold"), key
        if t.layer == "gold":
            keys_rule = t.constraints["keys_not_null"]
            nullable_by_design = {"gold.distribution": {"channel"},
                                  # a subject column that does not apply to the metric is null
                                  "gold.trend_facts": {"mq_cluster", "queue", "qmgr", "sending_qmgr", "channel",
                                                       "facet"}}.get(key, set())
            assert {k for k in t.keys if f"{k} IS NOT NULL" in keys_rule} == set(t.keys) - nullable_by_design, key


def test_each_expression_names_only_columns_of_its_table():
    for key, t in SPECS.items():
        for name, expr in t.checks:
            words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr)) - _SQL_WORDS
            assert words <= set(t.columns), (key, name, words - set(t.columns))


def test_the_change_data_feed_is_on_the_slow_moving_tables_and_documented():
    feeds = {key for key, t in SPECS.items() if t.change_data_feed}
    assert feeds == {"silver.config_history", "silver.channel_status", "gold.run_summary"}
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## What changed between two versions"):text.index("## Asking the tables")]
    assert all(f"`{key}`" in section for key in feeds)
    assert all(SPECS[k].properties.get("delta.enableChangeDataFeed") == "true" for k in feeds)


def test_constraints_are_read_from_a_tables_properties():
    config = {"delta.constraints.keys_not_null": "run_date IS NOT NULL", "delta.enableChangeDataFeed": "true",
              "delta.dataSkippingStatsColumns": "sending_qmgr"}
    assert constraints_in(config) == {"keys_not_null": "run_date IS NOT NULL"}
    assert constraints_in(None) == {}

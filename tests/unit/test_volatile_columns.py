"""The columns two runs of one landing may differ in (clwl.lake.registry.VOLATILE_COLUMNS) are named exactly (issue 39
item 12): a pattern such as ``seconds$`` also dropped gold.stuck_messages.age_seconds, a result, from every lake
comparison, so a wrong age could never fail one."""

from __future__ import annotations

from clwl.lake.registry import SPECS, VOLATILE_COLUMNS
from tests import lake_compare


def test_volatile_columns_are_named_columns_of_the_registry_and_no_result():
    every = {c for t in SPECS.values() for c in t.columns}
    assert VOLATILE_COLUMNS <= every, VOLATILE_COLUMNS - every
    assert "age_seconds" in SPECS["gold.stuck_messages"].columns and "age_seconds" not in VOLATILE_COLUMNS
    # Results a comparison must see: the replay's and detection's columns.
    for key in ("gold.routing_replay", "gold.stuck_messages", "gold.distribution"):
        assert not set(SPECS[key].columns) & VOLATILE_COLUMNS, key
    # The lake comparison uses the one list (no pattern of its own).
    assert lake_compare.VOLATILE_COLUMNS is VOLATILE_COLUMNS
    assert not hasattr(lake_compare, "VOLATILE")

"""What-if overrides (clwl/analyses/whatif.py): one schema for the command line and the DAG; unknown keys, names and
out-of-range values refused with one line; the ranges are MQ's (CLWLWGHT 1-99; CLWLPRTY, CLWLRANK, NETPRTY
0-9; the documented channel states)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from clwl.analyses.whatif import (
    CHANNEL_ATTRS_SCHEMA,
    CHANNEL_STATE_SCHEMA,
    OVERRIDES,
    QUEUE_ATTRS_SCHEMA,
    WHATIF_SCHEMA,
    WhatIf,
    WhatIfError,
    parse_whatif,
    unknown_names,
)
from clwl.landing.layout import MQ_NAME_PATTERN
from tests.handmade import config_capture


def test_a_valid_whatif_keeps_values_as_mq_prints_them():
    w = parse_whatif('{"name": "qm2-w80", "channel_attrs": {"TO.QM2": {"clwlwght": 80, "CLWLPRTY": "3"}}, '
                     '"suspend": ["QM4"], "channel_state": {"TO.QM3": "RETRYING"}, '
                     '"queue_attrs": {"APP.ORDERS@QM4": {"PUT": "DISABLED"}}}')
    assert w.name == "qm2-w80"
    assert w.channel_attrs == {"TO.QM2": {"CLWLWGHT": "80", "CLWLPRTY": "3"}}
    assert w.apply("QM1", "CLUSQMGR", {"CHANNEL": "TO.QM2", "CLWLWGHT": "50"}, None)["CLWLWGHT"] == "80"
    assert w.apply("QM1", "QCLUSTER", {"QUEUE": "APP.ORDERS", "CLUSQMGR": "QM4"}, None)["PUT"] == "DISABLED"


@pytest.mark.parametrize("text, says", [
    ('{"channel_attrs": {"TO.QM2": {"CLWLWGHT": 80}}}', '"name" is required'),
    ('{"name": ".."}', "name: out of range or not allowed"),
    ('{"name": "../../x"}', "name: out of range or not allowed"),
    ('{"name": "a/b"}', "name: out of range or not allowed"),
    ('{"name": ""}', "name: out of range"),
    ('{"name": "w", "channel_attr": {"TO.QM2": {"CLWLWGHT": 80}}}', "unknown key 'channel_attr'"),
    ('{"name": "w", "channel_attrs": {"TO.QM2": {"CLWLWGHT": "abc"}}}', "channel_attrs/TO.QM2/CLWLWGHT"),
    ('{"name": "w", "channel_attrs": {"TO.QM2": {"CLWLWGHT": 12345678901234567890}}}', "CLWLWGHT"),
    ('{"name": "w", "channel_attrs": {"TO.QM2": {"CLWLWGHT": 0}}}', "CLWLWGHT"),
    ('{"name": "w", "channel_attrs": {"TO.QM2": {"CLWLWGHT": "100"}}}', "CLWLWGHT"),
    ('{"name": "w", "channel_attrs": {"TO.QM2": {"CLWLPRTY": 10}}}', "CLWLPRTY"),
    ('{"name": "w", "channel_attrs": {"TO.QM2": {"NETPRTY": -1}}}', "NETPRTY"),
    ('{"name": "w", "channel_attrs": {"TO.QM2": {"COLOUR": 1}}}', "COLOUR"),
    ('{"name": "w", "channel_state": {"TO.QM3": "BROKEN"}}', "channel_state/TO.QM3"),
    ('{"name": "w", "queue_attrs": {"APP.ORDERS": {"PUT": "DISABLED"}}}', "queue_attrs"),
    ('{"name": "w", "queue_attrs": {"APP.ORDERS@QM4": {"PUT": "MAYBE"}}}', "PUT"),
    ('{"name": "w", "suspend": "QM4"}', "suspend"),
    ('[1, 2]', "expected a JSON object"),
    ('{"name": ', "not JSON"),
])
def test_what_cannot_be_used_is_refused_with_one_line(text, says):
    with pytest.raises(WhatIfError) as err:
        parse_whatif(text)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_the_ranges_are_mqs():
    """CLWLWGHT 1-99, the priorities and ranks 0-9: both ends accepted, one beyond refused, as a number and
    as a string of digits."""
    for attr, low, high in (("CLWLWGHT", 1, 99), ("CLWLPRTY", 0, 9), ("CLWLRANK", 0, 9), ("NETPRTY", 0, 9)):
        for v in (low, high, str(low), str(high)):
            WhatIf.from_dict({"name": "w", "channel_attrs": {"C": {attr: v}}})
        for v in (low - 1, high + 1, str(high + 1)):
            with pytest.raises(WhatIfError):
                WhatIf.from_dict({"name": "w", "channel_attrs": {"C": {attr: v}}})


def test_names_the_day_does_not_know():
    w = WhatIf.from_dict({"name": "w", "channel_attrs": {"TO.QM9": {"CLWLWGHT": 80}, "TO.QM2": {"CLWLWGHT": 80}},
                          "suspend": ["QM7"], "queue_attrs": {"APP.NOPE@QM2": {"PUT": "DISABLED"}}})
    assert unknown_names(w, {"TO.QM2", "TO.QM3"}, {"QM2", "QM3"}, {"APP.ORDERS@QM2"}) == [
        "channel TO.QM9", "queue manager QM7", "queue instance APP.NOPE@QM2"]


def test_the_schema_is_one_json_schema():
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(WHATIF_SCHEMA)
    assert WHATIF_SCHEMA["additionalProperties"] is False and WHATIF_SCHEMA["required"] == ["name"]


# ----------------------------------------------------------------------------------------------------------
# What passes the schema reaches the replay as given (issue 25 item 4): the view is built by the replay's own
# timelines_from_rows (load_timelines once the silver rows are read), with WhatIf.apply as the run passes it.

DAY_START = datetime(2026, 11, 20, tzinfo=timezone.utc)
CAPTURED = DAY_START + timedelta(hours=6)


def _replayed_view(whatif: WhatIf | None):
    """QM1's view at 06:00: channels TO.QM2 and TO.QM4, APP.ORDERS on QM2 and QM4, both channels RUNNING; the
    history rows are the parsed capture's records, as silver.config_history and silver.channel_status hold them."""
    from clwl.parse.mqsc import parse_mqsc_text
    from spark.replay import timelines_from_rows

    capture = parse_mqsc_text(config_capture("QM1", {"QM2": {}, "QM4": {}}, {"APP.ORDERS": {"QM2": {}, "QM4": {}}}),
                              "2026-11-20/QM1/config_060000.mqsc")
    assert not capture.problems
    hist = [{"observing_qmgr": "QM1", "kind": r.kind, "attrs": dict(r.attrs), "valid_from": CAPTURED,
             "valid_to": None, "source_file": r.source} for r in capture.records]
    status = [{"observing_qmgr": "QM1", "channel": c, "chltype": "CLUSSDR", "status": "RUNNING",
               "xmitq": "SYSTEM.CLUSTER.TRANSMIT.QUEUE", "substate": "", "valid_from": CAPTURED, "valid_to": None,
               "source_file": "2026-11-20/QM1/chstatus_060000.mqsc"} for c in ("TO.QM2", "TO.QM4")]
    timelines = timelines_from_rows(hist, status, DAY_START, DAY_START + timedelta(days=1),
                                    whatif.apply if whatif is not None else None)
    (snapshot,) = timelines["QM1"]
    return snapshot.view


def _channel(view, name: str):
    found = [c for c in view.channels if c.name == name]
    assert found, f"{name} left out of the view"  # what "CLWLWGHT": 80.0 did
    return found[0]


def _instance(view, queue: str, qmgr: str):
    found = [i for i in view.instances if (i.queue, i.qmgr) == (queue, qmgr)]
    assert found, f"{queue}@{qmgr} left out of the view"
    return found[0]


# How the view shows each attribute an override may set; a key the schema gains without an entry here fails.
CHANNEL_FIELDS = {"CLWLWGHT": lambda c: c.clwlwght, "CLWLPRTY": lambda c: c.clwlprty,
                  "CLWLRANK": lambda c: c.clwlrank, "NETPRTY": lambda c: c.netprty}
QUEUE_FIELDS = {"PUT": lambda i: "ENABLED" if i.put_enabled else "DISABLED", "CLWLPRTY": lambda i: i.clwlprty,
                "CLWLRANK": lambda i: i.clwlrank, "DEFBIND": lambda i: i.defbind}


def _accepted(schema: dict) -> list:
    """Every value the schema accepts at the ends of its range (as a number and as digits), or every choice."""
    if "enum" in schema:
        return list(schema["enum"])
    number = schema["oneOf"][0]
    ends = (number["minimum"], number["maximum"])
    return [*ends, *map(str, ends)]


def _every_accepted_override():
    channel = CHANNEL_ATTRS_SCHEMA["additionalProperties"]["properties"]
    queue = QUEUE_ATTRS_SCHEMA["additionalProperties"]["properties"]
    for attr, schema in channel.items():
        for v in _accepted(schema):
            yield ({"channel_attrs": {"TO.QM4": {attr: v}}},
                   lambda view, attr=attr: CHANNEL_FIELDS[attr](_channel(view, "TO.QM4")), int(v))
    yield {"suspend": ["QM4"]}, lambda view: _channel(view, "TO.QM4").suspended, True
    for state in CHANNEL_STATE_SCHEMA["additionalProperties"]["enum"]:
        yield {"channel_state": {"TO.QM4": state}}, lambda view: _channel(view, "TO.QM4").state, state
    for attr, schema in queue.items():
        for v in _accepted(schema):
            yield ({"queue_attrs": {"APP.ORDERS@QM4": {attr: v}}},
                   lambda view, attr=attr: QUEUE_FIELDS[attr](_instance(view, "APP.ORDERS", "QM4")),
                   v if isinstance(v, str) and not v.isdigit() else int(v))


OVERRIDE_CASES = list(_every_accepted_override())


def test_the_cases_cover_every_key_the_schema_accepts():
    assert set(OVERRIDES) == {"channel_attrs", "suspend", "channel_state", "queue_attrs"}
    assert {k for case, _, _ in OVERRIDE_CASES for k in case} == set(OVERRIDES)
    assert {a for case, _, _ in OVERRIDE_CASES for a in case.get("channel_attrs", {}).get("TO.QM4", {})} == \
        set(CHANNEL_ATTRS_SCHEMA["additionalProperties"]["properties"])
    assert {a for case, _, _ in OVERRIDE_CASES for a in case.get("queue_attrs", {}).get("APP.ORDERS@QM4", {})} == \
        set(QUEUE_ATTRS_SCHEMA["additionalProperties"]["properties"])


@pytest.mark.parametrize("overrides, shown, expected", OVERRIDE_CASES,
                         ids=[json.dumps(c, separators=(",", ":")) for c, _, _ in OVERRIDE_CASES])
def test_every_accepted_override_reaches_the_replay_as_given(overrides, shown, expected):
    whatif = parse_whatif(json.dumps({"name": "w", **overrides}))  # as `clwl run --what-if` takes it
    view = _replayed_view(whatif)
    assert shown(view) == expected
    # The rest of the day is the captured one: TO.QM2 and APP.ORDERS@QM2 untouched, nothing left out.
    assert _replayed_view(None).channels[0] == _channel(view, "TO.QM2")
    assert len(view.channels) == 2 and len(view.instances) == 2


@pytest.mark.parametrize("text, where, says", [
    # A name with a trailing newline: "$" matched before it, and the run left a whatif/w80\n/ folder.
    ('{"name": "w80\\n", "suspend": ["QM2"]}', "name", 'out of range or not allowed: "w80\\n"'),
    ('{"name": "\\nw80", "suspend": ["QM2"]}', "name", "out of range or not allowed"),
    # 80.0 is an integer to JSON Schema; kept as "80.0" the view could not read it and dropped TO.QM2.
    ('{"name": "w", "channel_attrs": {"TO.QM2": {"CLWLWGHT": 80.0}}}', "channel_attrs/TO.QM2/CLWLWGHT",
     "not an integer: 80.0"),
    ('{"name": "w", "queue_attrs": {"APP.ORDERS@QM4": {"CLWLRANK": 1.0}}}', "queue_attrs/APP.ORDERS@QM4/CLWLRANK",
     "not an integer: 1.0"),
    # true is an int to Python (True == 1).
    ('{"name": "w", "channel_attrs": {"TO.QM2": {"NETPRTY": true}}}', "channel_attrs/TO.QM2/NETPRTY",
     "not an integer: true"),
    ('{"name": "w", "channel_attrs": {"TO.QM2": {"CLWLWGHT": "80\\n"}}}', "channel_attrs/TO.QM2/CLWLWGHT",
     "out of range or not allowed"),
    ('{"name": "w", "channel_attrs": {"TO.QM2\\n": {"CLWLWGHT": 80}}}', "channel_attrs", "not allowed"),
    ('{"name": "w", "channel_state": {"TO.QM2\\n": "RUNNING"}}', "channel_state", "not allowed"),
    ('{"name": "w", "suspend": ["QM2\\n"]}', "suspend/0", "not allowed"),
    ('{"name": "w", "queue_attrs": {"APP.ORDERS@QM4\\n": {"PUT": "DISABLED"}}}', "queue_attrs", "not allowed"),
])
def test_what_would_break_or_change_the_run_is_refused_naming_the_override(text, where, says):
    with pytest.raises(WhatIfError) as err:
        parse_whatif(text)
    message = str(err.value)
    assert message.startswith(f"what-if: {where}: ") and says in message and "\n" not in message, message


def test_every_name_pattern_is_anchored_at_the_very_end():
    """Each pattern of the schema refuses its valid text with a newline after it (Python's "$" takes that)."""
    import re

    from clwl.analyses.whatif import CHANNEL_NAME_PATTERN, INSTANCE_PATTERN, NAME_PATTERN

    for pattern, valid in ((NAME_PATTERN, "w80"), (CHANNEL_NAME_PATTERN, "TO.QM2"),
                           (INSTANCE_PATTERN, "APP.ORDERS@QM4"), (MQ_NAME_PATTERN, "QM4"),
                           (_number_pattern("CLWLWGHT"), "80"), (_number_pattern("NETPRTY"), "9")):
        assert re.search(pattern, valid), pattern
        assert not re.search(pattern, valid + "\n"), pattern


def _number_pattern(attr: str) -> str:
    return CHANNEL_ATTRS_SCHEMA["additionalProperties"]["properties"][attr]["oneOf"][1]["pattern"]

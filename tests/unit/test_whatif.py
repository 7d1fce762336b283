"""What-if overrides (clwl/whatif.py): one schema for the command line and the DAG; unknown keys, names and
out-of-range values refused with one line; the ranges are MQ's (CLWLWGHT 1-99; CLWLPRTY, CLWLRANK, NETPRTY
0-9; the documented channel states)."""

from __future__ import annotations

import pytest

from clwl.whatif import WHATIF_SCHEMA, WhatIf, WhatIfError, parse_whatif, unknown_names


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

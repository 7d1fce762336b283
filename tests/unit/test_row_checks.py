"""The per-record check before rows go to Arrow (spark.ingest.parse_tasks._row_problem): a row whose texts are all
ASCII is passed without a scan, and every text of a string, a string map (keys and values) or a string array is
still looked at when one of them is not ASCII, so that a lone surrogate costs its record only."""

from __future__ import annotations

import pytest

from spark.ingest.parse_tasks import _all_ascii, _row_problem
from spark.tables import TABLES

KEY = "bronze.activity_operations"
COLUMNS = TABLES[KEY].columns


def _row(**values) -> tuple:
    return tuple(values.get(c) for c in COLUMNS)


@pytest.mark.parametrize("value, expected", [
    ("QM1", True), ("Café", False),
    ({"Open_options": "8208", "ObjName": "APP.Q"}, True),
    ({"ObjName": None}, False),  # a None among them: not "only strings", so the caller looks at each text
    ({"Objé": "x"}, False), ({"x": "é"}, False),
    (["a", "b"], True), (["a", None], False), ([], True), ({}, True),
])
def test_all_ascii(value, expected):
    assert _all_ascii(value) is expected


def test_ascii_and_valid_unicode_rows_pass():
    assert _row_problem(KEY, _row(source_file="QM1/a.amqsact", fields={"ObjName": "APP.Q", "Appl": None})) is None
    assert _row_problem(KEY, _row(source_file="QM1/é.amqsact", fields={"Appl": "café", "k": None})) is None


@pytest.mark.parametrize("fields", [
    {"ObjName": "APP\ud800Q"},              # a lone surrogate in a value
    {"Obj\udfffName": "APP.Q"},             # in a key
    {"Appl": None, "ObjName": "\ud800"},    # beside a None, which takes the slow path
])
def test_a_lone_surrogate_in_a_map_is_found(fields):
    reason = _row_problem(KEY, _row(source_file="QM1/a.amqsact", fields=fields))
    assert reason is not None and reason.startswith("lone surrogate in fields")


def test_a_lone_surrogate_in_a_string_column_and_an_integer_out_of_range():
    assert _row_problem(KEY, _row(source_file="QM1/\ud800.amqsact")).startswith("lone surrogate in source_file")
    assert "out of range" in _row_problem(KEY, _row(source_file="f", position=2**31))

"""amqsevt's JSON activity trace, fuzzed by family (issue 40, items 2 and 8).

test_parser_fuzz.py mutates the amqsevt seeds byte by byte, as it does every format; these families mutate them
as JSON, where a reader of JSON goes wrong: a value nested deep (across the recursion limit, where the decoder
still takes it and printing it again does not), numbers too big or too long for ``int()``, values of another
type, NaN and Infinity, duplicate keys, byte order marks, objects cut short, and the same objects reshaped into
every layout amqsevt or a log shipper writes (one line, blanks between, a JSON array, CRLF).

Every mutant is driven as a parse task drives a landing file (test_parser_fuzz.parse_checked: the parse, the
Arrow conversion, records read = accepted + quarantined, never the last-resort ``parser failed:`` net); an
activity trace is never rejected whole. What each family must cost:

* a mutation inside one object costs that object's own problems at most: every operation of the other objects is
  read as it was, and every problem is at one of the touched object's lines;
* a reshaping of undamaged objects costs nothing: the very records of the objects as amqsevt prints them;
* a byte order mark before or between objects costs nothing either; anywhere else, its object.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import pytest
from amqsevt_render import amqsevt_objects
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_parser_fuzz import landing_file, parse_checked, parse_in_task, quarantine

from clwl.parse.activity_trace_json import parse_amqsevt_json_text

ROOT = Path(__file__).resolve().parents[2]
AMQSACT = ROOT / "tests" / "fixtures" / "amqsact_trace"
#: verbose amqsact fixtures, rendered as amqsevt prints their trace messages (several messages, interleaved
#: connections, HIGH with structure dumps, a channel agent's MQGETs with transmission headers)
SEED_NAMES = ("notfixed_medium", "seq_interleaved", "out_of_order", "high_mqmd", "mca_sender_qm1")
SEEDS = {name: amqsevt_objects((AMQSACT / f"{name}.amqsact").read_text()) for name in SEED_NAMES}
EXAMPLES = 40


# ------------------------------------------------------------------------------------------------ layouts
def _pretty(o: dict) -> str:
    return json.dumps(o, indent=2, separators=(",", " : "))


def _compact(o: dict) -> str:
    return json.dumps(o, separators=(",", ":"))


#: name -> (how one object is printed, what goes before the first, between two, after the last)
LAYOUTS = {
    "json (pretty)": (_pretty, "", "\n", "\n"),
    "json_compact (one a line)": (_compact, "", "\n", "\n"),
    "one line": (_compact, "", "", ""),
    "one line, blanks between": (_compact, "", "  ", "\n"),
    "blank lines between": (_pretty, "\n", "\n\n\n", "\n\n"),
    "a JSON array on one line": (_compact, "[", ",", "]"),
    "a pretty JSON array": (lambda o: json.dumps(o, indent=4), "[\n", ",\n", "\n]\n"),
    "CRLF": (lambda o: _pretty(o).replace("\n", "\r\n"), "", "\r\n", "\r\n"),
    "tabs, keys sorted": (lambda o: json.dumps(o, indent="\t", sort_keys=True), "", "\n", "\n"),
    "a byte order mark before each object": (_compact, "\ufeff", "\n\ufeff", "\n"),
    "a byte order mark, then one line": (_compact, "\ufeff", " ", ""),
}


def layout_text(objects: list[str], layout: str) -> tuple[str, list[tuple[int, int, int]]]:
    """The printed objects joined in ``layout``, and each one's (first line, last line, offset of its end)."""
    _, before, sep, after = LAYOUTS[layout]
    text, spans = before, []
    for i, o in enumerate(objects):
        first = text.count("\n") + 1
        text += o
        spans.append((first, text.count("\n") + 1, len(text)))
        text += sep if i < len(objects) - 1 else after
    return text, spans


# ------------------------------------------------------------------------------------------------ families
#: Raw JSON text put where a value was. A marker string stands for it in the object, replaced once printed:
#: json.dumps can print none of these (a value nested 100,000 deep, an integer of 5,000 digits, a duplicate key).
DEPTHS = (6, 63, 64, 65, 500, *range(960, 1001, 4), 5_000, 100_000)
BIG_NUMBERS = ("9" * 19, "9" * 20, "-" + "9" * 21, "9" * 40, "9" * 4_300, "9" * 4_301, "-" + "9" * 5_000,
               "1e400", "-1e400", "1e-400", "1.5", "-0", "0.0", "1E+2", "123456789012345678901234567890.5",
               "4294967295", "2147483648", "-2147483649", "18446744073709551616")
OTHER_TYPES = ("null", "true", "false", '""', '"x"', "0", "-1", "1.5", "[]", "{}", "[1]", '{"a": 1}', '"12"',
               '" 12 "', '{"name": "Ok"}', '{"value": null}', '{"options": [1]}', '{"options": {"a": 1}}',
               '"0x"', '"0xZZ"', '"Unknown [x]"', '"Unknown [99999999999999999999999]"', '["Put"]', '"\\u0000"',
               '"\\ud800"', '"' + "A" * 5_000 + '"')
NANS = ("NaN", "Infinity", "-Infinity", '{"name": "Ok", "value": NaN}', '{"options": Infinity}', "[NaN]",
        '"NaN"', '{"name": "Ok", "value": -Infinity}')


def deep(depth: int, kind: int) -> str:
    if kind % 2:
        return '{"a": ' * depth + "1" + "}" * depth
    return "[" * depth + "]" * depth


def value_paths(obj) -> list[tuple]:
    """The path (keys and indexes) of every value in ``obj``, the containers too (iteratively: no recursion)."""
    paths, todo = [], [((), obj)]
    while todo:
        path, value = todo.pop()
        paths.append(path)
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        todo.extend((path + (k,), v) for k, v in items)
    return sorted(paths, key=str)


def _at(obj, path: tuple):
    for k in path:
        obj = obj[k]
    return obj


def mutate_object(obj: dict, family: str, a: int, b: int) -> tuple[dict, dict[str, str]]:
    """A copy of ``obj`` with one value (or key) changed in ``family``'s way, and the markers to replace in its
    printed text: marker JSON text -> raw JSON text."""
    obj = json.loads(json.dumps(obj))
    paths = [p for p in value_paths(obj) if p]
    path = paths[a % len(paths)]
    marker = f"@@{family}-{a}@@"
    if family == "duplicate key":
        # an object of eventData (the header, an operation, a value's): where a duplicate is read
        holders = [p for p in value_paths(obj) if p[:1] == ("eventData",) and isinstance(_at(obj, p), dict)
                   and _at(obj, p)]
        holder = _at(obj, holders[a % len(holders)])
        key = sorted(holder)[b % len(holder)]
        other = (OTHER_TYPES + BIG_NUMBERS + NANS)[b % (len(OTHER_TYPES) + len(BIG_NUMBERS) + len(NANS))]
        items = list(holder.items())
        at = items.index((key, holder[key])) + (b % 2)  # the duplicate after the key (it wins) or before it
        items.insert(at, (marker, marker))
        holder.clear()
        holder.update(items)
        return obj, {json.dumps(marker) + ": " + json.dumps(marker): json.dumps(key) + ": " + other,
                     json.dumps(marker) + ":" + json.dumps(marker): json.dumps(key) + ":" + other}
    raw = {"deep": lambda: deep(DEPTHS[b % len(DEPTHS)], b // len(DEPTHS)),
           "big numbers": lambda: BIG_NUMBERS[b % len(BIG_NUMBERS)],
           "types": lambda: OTHER_TYPES[b % len(OTHER_TYPES)],
           "NaN": lambda: NANS[b % len(NANS)]}[family]()
    _at(obj, path[:-1])[path[-1]] = marker
    return obj, {json.dumps(marker): raw}


def printed(obj: dict, layout: str, markers: dict[str, str]) -> str:
    text = LAYOUTS[layout][0](obj)
    for marker, raw in markers.items():
        if "\r\n" in text:
            raw = raw.replace("\n", "\r\n")
        text = text.replace(marker, raw)
    return text


def _op_key(o) -> tuple:
    """An operation record as read, but for where it is (its line, its message's ordinal in the file: both move
    when another object is lost)."""
    return tuple((f.name, repr(sorted(o.fields.items()) if f.name == "fields" else getattr(o, f.name)))
                 for f in dataclasses.fields(o) if f.name not in ("source", "line", "trace_message"))


def own(problems) -> list:
    """The problems but for the one way losing an object touches another: a put of a later object on a handle
    whose MQOPEN was in the lost one (what amqsact's reader says of a trace message that is missing too)."""
    return [p for p in problems if "whose MQOPEN is not in the input" not in p.reason]


def elsewhere(problems, span: tuple[int, int, int]) -> list[str]:
    """The problems (:func:`own`) outside the touched object's lines."""
    first, last, _ = span
    return [f"{p.line}: {p.reason}" for p in own(problems) if not first <= p.line <= last]


def check_landing(tmp_path: Path, text: str, name: str = "QM1.2026-11-20.amqsevt.json") -> dict:
    """``text`` as a landing file through a parse task's path: read, never rejected whole, never an escape."""
    summary, rows = parse_checked(landing_file(tmp_path, name, text.encode("utf-8", "surrogatepass"), "QM1"))
    assert summary["status"] == "ingested", summary["reason"]
    assert summary["records_read"] == summary["records_accepted"] + summary["records_quarantined"]
    assert all(not p["reason"].startswith("parser failed") for p in quarantine(rows))
    return summary


# ------------------------------------------------------------------------------------------------ the tests
@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("amqsevt_fuzz")


@pytest.mark.parametrize("family", ["deep", "big numbers", "types", "NaN", "duplicate key"])
def test_a_mutated_value_costs_its_own_object_only(family, fuzz_dir):
    counter = iter(range(1 << 30))
    seen: Counter = Counter()

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(seed=st.sampled_from(SEED_NAMES), layout=st.sampled_from(sorted(LAYOUTS)), which=st.integers(0, 1 << 16),
           a=st.integers(0, 1 << 20), b=st.integers(0, 1 << 20))
    def run(seed, layout, which, a, b):
        objects = SEEDS[seed]
        i = which % len(objects)
        bad, markers = mutate_object(objects[i], family, a, b)
        texts = [LAYOUTS[layout][0](o) for o in objects]
        texts[i] = printed(bad, layout, markers)
        text, spans = layout_text(texts, layout)
        summary = check_landing(fuzz_dir / family.replace(" ", "_") / str(next(counter)), text)
        got = parse_amqsevt_json_text(text, "t")
        others = [o for j, o in enumerate(objects) if j != i]
        kept = Counter(_op_key(o) for o in parse_amqsevt_json_text("\n".join(map(_compact, others)), "t").operations)
        missing = kept - Counter(_op_key(o) for o in got.operations)
        assert not missing, f"operations of untouched objects lost: {list(missing)[:2]}"
        assert not elsewhere(got.problems, spans[i]), elsewhere(got.problems, spans[i])
        seen["quarantined" if summary["records_quarantined"] else "clean"] += 1

    run()
    # not vacuous: some mutants cost a record, and (but for a value too deep) some cost nothing
    assert seen["quarantined"] >= 5, seen
    if family != "deep":
        assert seen["clean"] >= 1, seen


@pytest.mark.parametrize("depth", [*range(940, 1001), 10_000, 100_000])
def test_a_value_nested_near_the_recursion_limit_costs_its_event(tmp_path, depth):
    """Issue 40 item 2: a value nested ~980 deep was decoded, then printing it again (json.dumps of an operation)
    hit the recursion limit a few frames deeper and the whole file went to ``parser failed:``. Where that
    happens depends on the caller's stack, so every depth around it is tried, in an operation, in the header and
    in a known field, through a parse task's path."""
    objects = SEEDS["seq_interleaved"]
    for where in (("eventData", "activityTrace", 1, "x"), ("eventData", "x"), ("eventData", "applName")):
        bad = json.loads(json.dumps(objects[1]))
        _at(bad, where[:-1])[where[-1]] = "@@deep@@"
        texts = [_compact(o) for o in objects]
        texts[1] = _compact(bad).replace('"@@deep@@"', deep(depth, depth))
        text = "\n".join(texts) + "\n"
        summary = check_landing(tmp_path / "/".join(map(str, where)), text)
        got = parse_amqsevt_json_text(text, "t")
        [problem] = own(got.problems)
        assert problem.line == 2 and "nested deeper than 64 levels" in problem.reason, problem.reason
        assert got.trace_messages == len(objects) - 1
        others = parse_amqsevt_json_text("\n".join(_compact(o) for j, o in enumerate(objects) if j != 1), "t")
        assert [_op_key(o) for o in got.operations] == [_op_key(o) for o in others.operations]
        assert summary["records_quarantined"] == len(got.problems)


@pytest.mark.parametrize("depth", [960, 980, 986, 988, 990, 1000])
def test_a_deep_value_costs_the_same_in_a_parse_task_writing_its_rows_as_it_goes(tmp_path, monkeypatch, depth):
    """The parse task's own body, one operation per chunk (its stack deeper than parse_checked's): the same
    counts as parsed whole, whatever the depth (where the limit was hit depended on the caller's stack)."""
    from spark.ingest import parse_tasks

    monkeypatch.setattr(parse_tasks, "TRACE_CHUNK_OPS", 1)
    objects = SEEDS["seq_interleaved"]
    bad = json.loads(json.dumps(objects[2]))
    bad["eventData"]["activityTrace"][0]["x"] = "@@deep@@"
    texts = [_compact(o) for o in objects]
    texts[2] = _compact(bad).replace('"@@deep@@"', deep(depth, 0))
    spec = landing_file(tmp_path / "landing", "QM1.2026-11-20.amqsevt.jsonl", "\n".join(texts).encode(), "QM1")
    whole, _ = parse_checked(spec)
    summary, rows, chunks = parse_in_task(spec, tmp_path / "scratch")
    counts = ("status", "reason", "records_read", "records_accepted", "records_quarantined", "rows")
    assert {k: summary[k] for k in counts} == {k: whole[k] for k in counts}
    assert chunks > 0 and summary["status"] == "ingested"
    assert any("nested deeper than 64 levels" in p["reason"] for p in rows["silver.quarantine"])


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_layout_gives_the_records_of_the_objects(layout, tmp_path):
    for seed, objects in SEEDS.items():
        want = [_op_key(o) for o in parse_amqsevt_json_text("".join(_pretty(o) + "\n" for o in objects),
                                                              "t").operations]
        assert want
        text, _ = layout_text([LAYOUTS[layout][0](o) for o in objects], layout)
        got = parse_amqsevt_json_text(text, "t")
        assert got.problems == [] and [_op_key(o) for o in got.operations] == want, seed
        assert got.trace_messages == len(objects)
        summary = check_landing(tmp_path / seed, text)
        as_printed = check_landing(tmp_path / f"{seed}.pretty", "".join(_pretty(o) + "\n" for o in objects))
        assert (summary["records_quarantined"], summary["records_accepted"]) == (0, as_printed["records_accepted"])


def test_reshaped_objects_cost_their_own_object_only(fuzz_dir):
    """Objects reshaped the way a hand or a shipper reshapes them: wrapped in a list or in an object, their
    operations moved out of eventData or given as an object, an operation as a list, keys shuffled, an object
    that is not amqsevt's."""
    counter = iter(range(1 << 30))
    shapes = ("wrapped in a list", "wrapped in an object", "activityTrace at the top", "activityTrace an object",
              "an operation a list", "eventData a list", "no eventData", "keys reversed", "an empty object",
              "activityTrace empty", "a string")

    def reshape(obj: dict, shape: str):
        obj = json.loads(json.dumps(obj))
        data = obj["eventData"]
        if shape == "wrapped in a list":
            return [obj]
        if shape == "wrapped in an object":
            return {"event": obj}
        if shape == "activityTrace at the top":
            obj["activityTrace"] = data.pop("activityTrace")
        elif shape == "activityTrace an object":
            data["activityTrace"] = {str(k): v for k, v in enumerate(data["activityTrace"])}
        elif shape == "an operation a list":
            data["activityTrace"][0] = list(data["activityTrace"][0].items())
        elif shape == "eventData a list":
            obj["eventData"] = [data]
        elif shape == "no eventData":
            del obj["eventData"]
        elif shape == "keys reversed":
            return {k: (dict(reversed(v.items())) if isinstance(v, dict) else v) for k, v in reversed(obj.items())}
        elif shape == "an empty object":
            return {}
        elif shape == "activityTrace empty":
            data["activityTrace"] = []
        elif shape == "a string":
            return json.dumps(obj)
        return obj

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(seed=st.sampled_from(SEED_NAMES), layout=st.sampled_from(sorted(LAYOUTS)), which=st.integers(0, 1 << 16),
           shape=st.sampled_from(shapes))
    def run(seed, layout, which, shape):
        objects = SEEDS[seed]
        i = which % len(objects)
        texts = [LAYOUTS[layout][0](o) for o in objects]
        texts[i] = LAYOUTS[layout][0](reshape(objects[i], shape))
        text, spans = layout_text(texts, layout)
        check_landing(fuzz_dir / "reshape" / str(next(counter)), text)
        got = parse_amqsevt_json_text(text, "t")
        others = [o for j, o in enumerate(objects) if j != i]
        kept = Counter(_op_key(o) for o in parse_amqsevt_json_text("\n".join(map(_compact, others)), "t").operations)
        assert not kept - Counter(_op_key(o) for o in got.operations)
        assert not elsewhere(got.problems, spans[i]), elsewhere(got.problems, spans[i])

    run()


def test_truncated_files_and_objects(fuzz_dir):
    """The file cut anywhere (amqsevt stopped, a copy cut short), or one object cut anywhere (a shipper's record
    limit): what was whole before the cut is read, the cut object is one problem at most."""
    counter = iter(range(1 << 30))

    @settings(max_examples=EXAMPLES * 2, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(seed=st.sampled_from(SEED_NAMES), layout=st.sampled_from(sorted(LAYOUTS)), which=st.integers(0, 1 << 16),
           at=st.integers(0, 1 << 24), whole_file=st.booleans())
    def run(seed, layout, which, at, whole_file):
        objects = SEEDS[seed]
        texts = [LAYOUTS[layout][0](o) for o in objects]
        if whole_file:
            full, spans = layout_text(texts, layout)
            text = full[: at % (len(full) + 1)]
            whole = [o for o, (_, _, end) in zip(objects, spans) if end <= len(text)]
        else:
            i = which % len(objects)
            texts[i] = texts[i][: at % len(texts[i])]
            text, spans = layout_text(texts, layout)
            whole = [o for j, o in enumerate(objects) if j != i]
        check_landing(fuzz_dir / "truncate" / str(next(counter)), text)
        got = parse_amqsevt_json_text(text, "t")
        kept = Counter(_op_key(o) for o in parse_amqsevt_json_text("\n".join(map(_compact, whole)), "t").operations)
        assert not kept - Counter(_op_key(o) for o in got.operations)
        assert len(own(got.problems)) <= 1, [p.reason for p in own(got.problems)]

    run()


@pytest.mark.parametrize("where", ["start", "between objects", "inside an object"])
def test_byte_order_marks(where, tmp_path):
    """A UTF-8 byte order mark (amqsevt's output saved by an editor, files joined by a shipper) before or between
    objects costs nothing; inside an object, that object (it is not JSON there)."""
    objects = SEEDS["seq_interleaved"]
    texts = [_pretty(o) for o in objects]
    if where == "start":
        text = "\ufeff" + "\n".join(texts)
    elif where == "between objects":
        text = "\n".join("\ufeff" + t for t in texts)
    else:
        texts[1] = texts[1].replace('"eventData"', '"eventData"\ufeff', 1)
        text = "\n".join(texts)
    summary = check_landing(tmp_path, text)
    got = parse_amqsevt_json_text(text, "t")
    want = parse_amqsevt_json_text("\n".join(texts).replace("\ufeff", ""), "t")
    if where == "inside an object":
        assert len(own(got.problems)) == 1 and got.trace_messages == len(objects) - 1
    else:
        assert got.problems == [] and [_op_key(o) for o in got.operations] == [_op_key(o) for o in want.operations]
        assert summary["records_quarantined"] == 0

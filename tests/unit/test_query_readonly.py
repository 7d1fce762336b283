"""`clwl query` only reads, by construction: DataFusion plans every statement with SQL options that forbid DDL,
DML and statements, checked on the whole plan (EXPLAIN ANALYZE included). The corpus below is what fooled the
hand-written scanner that came before (a nested comment ended at its first ``*/``, dollar-quoted and ``E''``
strings) and more: after each one, no file anywhere (the lake, the folder the statement names, the working
directory) has appeared or changed. Statements too large or too deep for the engine are refused before it plans
them (a 24 KB ``SELECT 1+1+...`` killed the process with SIGSEGV), however they are spelled: ``::`` casts,
``[...]`` subscripts, operators behind a string or comment a scanner could misread (BYPASSES, and a property test).
The corpus also runs through the bronze.put_records view and on a lake in the object store."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import deltalake
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clwl.lake.published import write_published
from clwl.lake.query import (
    MAX_NESTING,
    MAX_OPERATOR_MARKS,
    MAX_OPERATORS,
    MAX_SQL_CHARS,
    QueryError,
    run_query,
    size_problem,
)

COPY = "COPY (SELECT 'x' AS a) TO '{target}' STORED AS PARQUET"


def _nested_comment(depth: int) -> str:
    """``/* /* ... */ ' */`` with ``depth`` levels: a scanner that ends a comment at the first ``*/`` sees a quote
    open there and the rest of the statement as a string; DataFusion nests comments and sees the COPY."""
    return "/* " * depth + "*/ " * (depth - 1) + "' */"


ATTACKS = {
    # The reported attack, then the same at other depths and in other statement shapes.
    **{f"explain analyze, nested comment depth {d}":
       f"EXPLAIN ANALYZE {_nested_comment(d)} {COPY} --'" for d in (2, 3, 5, 8)},
    **{f"plain, nested comment depth {d}": f"{_nested_comment(d)} {COPY} --'" for d in (2, 4)},
    "explain, nested comment": f"EXPLAIN {_nested_comment(2)} {COPY} --'",
    "explain verbose copy": f"EXPLAIN VERBOSE {COPY}",
    "explain analyze copy": f"EXPLAIN ANALYZE {COPY}",
    "copy to a published file": "COPY (SELECT 'x' AS a) TO '{gold_file}' STORED AS PARQUET",
    "copy a table out": "COPY routing_replay TO '{out}/copied.csv' STORED AS CSV",
    "copy, lower case": COPY.replace("COPY", "copy"),
    "copy, mixed case and tabs": COPY.replace("COPY", "CoPy\t\n"),
    "copy after a no-break space": "\u00a0" + COPY,
    "E-string hides a quote": "EXPLAIN ANALYZE COPY (SELECT E'\\'' AS a) TO '{target}' STORED AS PARQUET",
    "dollar-quoted string": "EXPLAIN ANALYZE COPY (SELECT $$'$$ AS a) TO '{target}' STORED AS PARQUET",
    "quoted-name tricks": "EXPLAIN ANALYZE COPY (SELECT 1 AS \"'\") TO '{target}' STORED AS PARQUET",
    "backquote tricks": "EXPLAIN ANALYZE COPY (SELECT 1 AS `'`) TO '{target}' STORED AS PARQUET",
    "doubled quotes": "EXPLAIN ANALYZE COPY (SELECT '''' AS a) TO '{target}' STORED AS PARQUET",
    "line comment hides the semicolon": "SELECT 1 -- ;\n; " + COPY,
    "two statements": "SELECT 1; " + COPY,
    "comment then semicolon": "/*;*/ " + COPY,
    "create external table": "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '{out}/ext.csv'",
    "create table as": "CREATE TABLE t AS SELECT 1 AS a",
    "create or replace view": "CREATE OR REPLACE VIEW v AS SELECT * FROM routing_replay",
    "create schema": "CREATE SCHEMA s",
    "create function": "CREATE FUNCTION f(a INT) RETURNS INT RETURN a",
    "insert": "INSERT INTO routing_replay SELECT * FROM routing_replay",
    "insert, explained and run": "EXPLAIN ANALYZE INSERT INTO routing_replay SELECT * FROM routing_replay",
    "with then insert": "WITH a AS (SELECT * FROM routing_replay) INSERT INTO routing_replay SELECT * FROM a",
    "update": "UPDATE routing_replay SET qmgr = 'X'",
    "delete": "DELETE FROM routing_replay",
    "truncate": "TRUNCATE TABLE routing_replay",
    "drop table": "DROP TABLE routing_replay",
    "drop view": "DROP VIEW routing_replay",
    "alter": "ALTER TABLE routing_replay ADD COLUMN z INT",
    "set": "SET datafusion.execution.batch_size = 1",
    "set time zone": "SET TIME ZONE = '+05:00'",
    "reset": "RESET datafusion.execution.batch_size",
    "prepare": "PREPARE p AS SELECT 1",
    "execute": "EXECUTE p",
    "deallocate": "DEALLOCATE p",
    "url table": "SELECT * FROM '{gold_file}'",
    # bronze.put_records is a view over two tables (clwl/lake/put_records.py): nothing writes through it either.
    "copy the view out": "COPY put_records TO '{out}/copied.csv' STORED AS CSV",
    "insert into the view": "INSERT INTO put_records SELECT * FROM put_records",
    "explain analyze copy of the view, nested comment":
        f"EXPLAIN ANALYZE {_nested_comment(2)} COPY bronze_put_records TO '{{target}}' STORED AS PARQUET --'",
    "drop the view": "DROP VIEW put_records",
    # Lookalike letters are not keywords: a parse error, never a write.
    "fullwidth copy": COPY.replace("COPY", "\uff23\uff2f\uff30\uff39"),
    "cyrillic o in copy": COPY.replace("COPY", "C\u041ePY"),
}


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("readonly") / "lake"
    table = pa.table({"msg_id": ["m1", "m2"], "qmgr": ["QM2", "QM3"]})
    deltalake.write_deltalake(str(root / "gold" / "routing_replay"), table)
    write_published(root / "gold", {"routing_replay": 0}, {}, run_id="r1", run_date="2026-11-20")
    puts = {"msg_id": ["m1", "m2"], "source_file": ["QM1/puts.csv"] * 2, "position": [1, 2]}
    deltalake.write_deltalake(str(root / "silver" / "message_events"), pa.table(puts))  # what the view reads
    deltalake.write_deltalake(str(root / "bronze" / "put_records"), pa.table({k: v[:1] for k, v in puts.items()}))
    return root


def _snapshot(*roots: Path) -> dict[str, str]:
    """Every file and folder under ``roots``: its content's hash (a folder: 'dir')."""
    seen: dict[str, str] = {}
    for root in roots:
        for p in [root, *root.rglob("*")]:
            seen[str(p)] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return seen


def _gold_file(lake: Path) -> Path:
    return next((lake / "gold" / "routing_replay").glob("*.parquet"))


@pytest.mark.parametrize("kind", sorted(ATTACKS))
def test_nothing_but_a_read_runs(lake, tmp_path, monkeypatch, kind):
    out = tmp_path / "elsewhere"
    out.mkdir()
    monkeypatch.chdir(tmp_path)  # a relative path in a statement would land here
    sql = ATTACKS[kind].format(target=out / "written.parquet", out=out, gold_file=_gold_file(lake))
    before = _snapshot(lake, tmp_path)
    with pytest.raises(QueryError) as refused:
        run_query(sql, lake)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(("refused: ", "bad SQL: ")), message
    assert _snapshot(lake, tmp_path) == before
    assert run_query("SELECT count(*) AS n FROM routing_replay", lake).to_pylist() == [{"n": 2}]


def test_a_write_is_named_in_the_refusal(lake, tmp_path):
    sql = ATTACKS["explain analyze, nested comment depth 2"].format(target=tmp_path / "x.parquet")
    with pytest.raises(QueryError, match=r"^refused: COPY is not a read \(DML\); clwl query only runs reading"):
        run_query(sql, lake)


@pytest.mark.parametrize("sql, rows", [
    ("EXPLAIN ANALYZE SELECT count(*) FROM routing_replay", 1),  # runs the plan: a read
    (f"SELECT {_nested_comment(3)} 1 AS a --'", 1),  # a nested comment in a read is fine
    ("SELECT E'\\'' AS a", 1),
    ("SELECT $$copy$$ AS a", 1),
    ("SELECT msg_id FROM routing_replay WHERE msg_id IN (" + ", ".join(f"'m{i}'" for i in range(2000)) + ")", 2),
    ("SELECT " + "+".join(["1"] * (MAX_OPERATORS - 1)) + " AS a", 1),
    ("SELECT msg_id FROM put_records", 2),  # the view: each put once (bronze holds m1, silver m1 and m2)
], ids=["explain analyze", "nested comment", "E-string", "dollar string", "IN list of 2,000", "operators at the limit",
        "the put_records view"])
def test_reads_still_run(lake, sql, rows):
    assert run_query(sql, lake).num_rows == rows


def _cli(sql: str, lake: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clwl", "query", sql, "--lake", str(lake)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONFAULTHANDLER": ""})


#: Spellings the scanner before this one did not count (issue 40): each exited 139 with no message.
BYPASSES = [
    ("10,000 casts", "SELECT 1" + "::INT" * 10_000, "operators; clwl query takes"),
    ("10,000 subscripts", "SELECT named_struct('a', 1)" + "['a']" * 10_000, "operators; clwl query takes"),
    ("20,000 terms after a nested comment", "SELECT /* /* */ ' */ " + "+".join(["1"] * 20_000) + " --'",
     "operators; clwl query takes"),
    ("12,000 terms after a dollar string", "SELECT $$'$$ AS a, " + "+".join(["1"] * 12_000),
     "operators; clwl query takes"),
    ("12,000 terms after an E-string", "SELECT E'\\'' AS a, " + "+".join(["1"] * 12_000) + " --'",
     "operators; clwl query takes"),
    ("12,000 terms after a tagged dollar string", "SELECT $q$'$q$ AS a, " + "+".join(["1"] * 12_000),
     "operators; clwl query takes"),
    # Nesting: counted by the same scanner, and bounded by the engine's own parser (50 levels) whatever the count.
    ("parentheses 20,000 deep after a nested comment", "SELECT /* /* */ ' */ " + "(" * 20_000 + "1" + ")" * 20_000
     + " --'", f"takes at most {MAX_NESTING}"),
    ("brackets 20,000 deep after a dollar string", "SELECT $$'$$ AS a, " + "[" * 20_000 + "1" + "]" * 20_000,
     f"takes at most {MAX_NESTING}"),
]


@pytest.mark.parametrize("what, sql, message", [
    ("12,000 terms (the reported SIGSEGV)", "SELECT " + "+".join(["1"] * 12_000), "operators; clwl query takes"),
    ("a column summed 8,000 times", "SELECT " + "+".join(["msg_id"] * 8_000) + " FROM routing_replay",
     "operators; clwl query takes"),
    ("1,500 unions", " UNION ALL ".join(["SELECT 1"] * 1_500), "operators; clwl query takes"),
    ("12,000 ANDs", "SELECT * FROM routing_replay WHERE " + " AND ".join(["1=1"] * 12_000), "characters"),
    ("parentheses 200 deep", "SELECT " + "(" * 200 + "1" + ")" * 200, f"takes at most {MAX_NESTING}"),
    ("over the size limit", "SELECT '" + "x" * MAX_SQL_CHARS + "' AS a", "characters; clwl query takes"),
    *BYPASSES,
    ("5,000 casts through the put_records view", "SELECT msg_id" + "::VARCHAR" * 5_000 + " FROM put_records",
     "operators; clwl query takes"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 60 else "")
def test_too_big_or_too_deep_is_one_line_and_exit_2(lake, what, sql, message):
    p = _cli(sql, lake)
    assert p.returncode == 2, (what, p.returncode, p.stderr[-500:])
    assert p.stdout == "" and len(p.stderr.splitlines()) == 1 and message in p.stderr, p.stderr


def test_the_limits_are_counted_outside_strings():
    assert size_problem("SELECT '" + "+" * MAX_OPERATORS + "' AS a, " + "+".join(["1"] * MAX_OPERATORS)) is None
    # ... and every operator mark is counted again in the whole text, strings and comments included, against a
    # bound the engine takes however it reads them.
    assert size_problem("SELECT '" + "+" * MAX_OPERATOR_MARKS + "' AS a") is None
    assert "counting those inside strings and comments; clwl query takes at most 2,000" in size_problem(
        "SELECT '" + "+" * (MAX_OPERATOR_MARKS + 1) + "' AS a")
    assert size_problem("SELECT " + "(" * MAX_NESTING + "1" + ")" * MAX_NESTING) is None
    assert "nested" in size_problem("SELECT " + "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1))
    assert size_problem("   ") == "no SQL statement given"


def test_a_cell_cannot_drive_the_terminal(tmp_path):
    """A landing file name or record value with ESC (set the window title) or U+202E (reorder the line) reaches
    the lake as data: the table format prints it escaped; JSON keeps the value itself."""
    import io
    import json

    from clwl.lake.query import write_json, write_table

    value = "QM1/\x1b]0;owned\x07puts\u202e.csv"
    table = pa.table({"source_file": [value]})
    out = io.StringIO()
    write_table(table, out, wide=True)
    assert "\x1b" not in out.getvalue() and "\x07" not in out.getvalue() and "\u202e" not in out.getvalue()
    assert "QM1/\\x1b]0;owned\\x07puts\\u202e.csv" in out.getvalue()
    out = io.StringIO()
    write_json(table, out)
    assert json.loads(out.getvalue()) == {"source_file": value}


#: What a scanner of SQL may read differently from the engine's: a statement starts with one of these, so that a
#: scanner that ends a comment or string in the wrong place takes everything after it for a string or a comment.
HIDERS = ["", "/* /* */ ' */", "/* ' */", "$$'$$ AS a,", "$t$'$t$ AS a,", "$t$ $$' $t$ AS a,", "E'\\'' AS a,",
          "e'\\\\''' AS a,", "'''' AS a,", "\"'\" AS a,", "`'` AS a,", "-- '\n", "X'27' AS a,", "U&'\\0027' AS a,"]
#: One link of a chain the engine plans and evaluates by recursion, each spelled several ways.
LINKS = ["::INT", ":: int", "::BIGINT", "['a']", "[1]", " [ 'a' ] ", "+1", " - 1", "||'x'", " AND true",
         " OR x", " IS NULL", " IS NOT NULL", "*2", "<>0", " UNION ALL SELECT 1", "=1"]


@settings(max_examples=200, deadline=None)
@given(hider=st.sampled_from(HIDERS), links=st.lists(st.sampled_from(LINKS), min_size=1, max_size=4),
       closer=st.sampled_from(["", " --'", " */", " $$", " '"]), upper=st.booleans())
def test_no_spelling_of_a_long_chain_passes(hider, links, closer, upper):
    """10,000 links of any chain, behind any string or comment a scanner could misread: refused before the
    engine sees it (it crashed past a few thousand), whatever a scanner makes of the text."""
    chain = "".join(links[i % len(links)] for i in range(10_000))
    sql = f"SELECT {hider} x{chain}{closer}"
    problem = size_problem(sql.upper() if upper else sql)
    assert problem is not None and problem.startswith("refused: "), problem


@pytest.mark.objectstore
def test_the_attacks_on_a_lake_on_the_object_store(object_store, monkeypatch, tmp_path):
    """The same on a lake in the object store (tests/objectstore.py): the bypass spellings are refused before the
    engine, the writes by it, a COPY into the bucket included, and no object of the store changes."""
    from clwl.lake.storage import lake_root, list_prefix, storage_options

    object_store.use(monkeypatch)
    monkeypatch.chdir(tmp_path)
    lake = lake_root(object_store.lake_uri("readonly"))
    table = lake / "gold" / "routing_replay"
    deltalake.write_deltalake(str(table), pa.table({"msg_id": ["m1", "m2"], "qmgr": ["QM2", "QM3"]}),
                              storage_options=storage_options(table))
    write_published(lake / "gold", {"routing_replay": 0})
    bucket = lake_root(f"s3://{object_store.bucket}")
    before = list_prefix(bucket)
    target = f"{lake}/written.parquet"
    attacks = [sql for what, sql, _ in BYPASSES] + [ATTACKS[k].format(target=target, out=lake, gold_file=target)
                                                     for k in ("explain analyze, nested comment depth 2",
                                                               "dollar-quoted string", "copy a table out")]
    for sql in attacks:
        with pytest.raises(QueryError, match=r"^(refused|bad SQL): "):
            run_query(sql, lake)
    assert list_prefix(bucket) == before and list(tmp_path.iterdir()) == []
    p = _cli(BYPASSES[0][1], lake)  # the process itself: one line, exit 2, no crash
    assert (p.returncode, p.stdout, len(p.stderr.splitlines())) == (2, "", 1), p.stderr
    assert run_query("SELECT count(*) AS n FROM routing_replay", lake).to_pylist() == [{"n": 2}]

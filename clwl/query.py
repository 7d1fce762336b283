"""SQL over the lake's Delta tables, without a JVM: the engine of ``clwl query`` (the command is clwl/cli/query.py).

Every Delta table at ``<lake>/<layer>/<table>`` (a folder with a ``_delta_log``) is addressable by its bare name
(``routing_replay``, ``quarantine``, ...); when two layers hold the same name the bare name is the gold one,
then silver, then bronze, and every table is also addressable as ``<layer>_<table>`` (``silver_message_events``).
The gold tables are read at the versions ``<lake>/gold/_published.json`` names (clwl/published.py): all from
the last publish that finished, even while another one is writing.

The engine is Apache DataFusion (the ``datafusion`` package) over delta-rs tables (``deltalake``, handed to it as
table providers): no JVM and no pyspark import. Its SQL is DataFusion's (PostgreSQL-like), not Spark SQL. The
engine itself refuses every plan that is not a read (:func:`run_query`).
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import decimal
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from clwl.lake import (
    LAYERS,
    Lake,
    LakeFileError,
    is_delta_table,
    open_delta,
)
from clwl.put_records import STORED_SUFFIX, VIEWS, view_sql
from clwl.storage import has_prefix, is_object_store, lake_root, list_folders
from clwl.terminal import printable

LAYER_PRIORITY = tuple(reversed(LAYERS))  # who gets the bare name when two layers share a table name: gold first
MAX_CELL = 60  # characters of a cell in the table format, unless --wide
FORMATS = ("table", "csv", "json")


class QueryError(Exception):
    """A lake that cannot be used or SQL that cannot be answered: one line for stderr."""


def discover_tables(lake: Path) -> dict[str, Path]:
    """Bare name (and ``<layer>_<table>``) -> table folder, for every ``<lake>/<layer>/<table>/_delta_log`` (a
    lake on an object store: the same, from listings of its prefixes)."""
    found: list[tuple[str, str, Path]] = []
    for layer in list_folders(lake):
        if layer.startswith((".", "_")):
            continue
        for table in list_folders(lake / layer):
            if is_delta_table(lake / layer / table):
                found.append((layer, table, lake / layer / table))

    def rank(layer: str) -> int:
        return LAYER_PRIORITY.index(layer) if layer in LAYER_PRIORITY else len(LAYER_PRIORITY)

    names: dict[str, Path] = {}
    for _layer, table, path in sorted(found, key=lambda f: (rank(f[0]), f[0], f[1])):
        names.setdefault(table, path)
    for layer, table, path in found:
        names.setdefault(f"{layer}_{table}", path)
    return names


# ------------------------------------------------------------------------------------------- reading only
# Read-only holds by construction: the statement is planned by DataFusion itself with SQLOptions that forbid
# DDL (CREATE, DROP ...), DML (INSERT, COPY ... TO ...) and statements (SET, PREPARE ...), and DataFusion checks
# those options on the whole logical plan, EXPLAIN [ANALYZE] included. No scanner of ours decides what writes:
# a hand-written one was fooled by nested comments, dollar-quoted and E'' strings (COPY overwrote a gold file).

#: DataFusion plans and evaluates an expression by recursion: a chain of a few thousand operators (``SELECT
#: 1+1+...`` with 8,000 terms, 16 KB; 4,000 UNION ALLs) overflows a thread's stack and kills the process
#: (SIGSEGV). Statements are bounded before the engine sees them, far below where it crashed (measured with
#: datafusion 55: 4,000 ``+`` terms and 2,000 UNIONs still ran).
MAX_SQL_CHARS = 65_536
MAX_OPERATORS = 1_000
MAX_NESTING = 48  # parentheses; the engine's own parser stops at 50 levels of recursion
_OPERATOR_CHARS = frozenset("+-*/%|&^<>=!")
_OPERATOR_WORDS = frozenset({"AND", "OR", "NOT", "UNION", "INTERSECT", "EXCEPT", "JOIN", "LIKE", "ILIKE",
                             "BETWEEN", "IS", "IN", "CASE", "WHEN"})
#: DataFusion's refusal ("DML not supported: COPY") -> what clwl query says. Its plan node names are kept.
_REFUSAL = re.compile(r"(DDL|DML|Statement) not supported: ([A-Za-z ]+)")


def _tokens(sql: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of each token of ``sql`` outside comments: ``string`` (single-quoted, the quotes
    included), ``name`` (double-quoted or backquoted), ``word``, ``semicolon``, ``other`` (any other non-space
    character). One pass: linear in the text. Only for counting (:func:`size_problem`) and for rewriting a
    timestamp literal DataFusion itself failed on; never to decide what may run."""
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"`":  # a string or a quoted name; doubled quotes escape
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            yield ("string" if c == "'" else "name"), i, min(j + 1, n)
            i = j + 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == ";":
            yield "semicolon", i, i + 1
            i += 1
        elif c.isalpha() or c == "_":
            j = i + 1
            while j < n and (sql[j].isalnum() or sql[j] == "_"):
                j += 1
            yield "word", i, j
            i = j
        else:
            if not c.isspace():
                yield "other", i, i + 1
            i += 1


def size_problem(sql: str) -> str | None:
    """Why ``sql`` is too big or too deep for the engine to plan safely (one line), or None. Errs towards
    refusing: operators inside comments the scan cannot see through are counted too, which only refuses a
    statement that is near the limit anyway."""
    if not sql.strip():
        return "no SQL statement given"
    if len(sql) > MAX_SQL_CHARS:
        return f"refused: the statement has {len(sql):,} characters; clwl query takes at most {MAX_SQL_CHARS:,}"
    operators = depth = deepest = 0
    for kind, start, end in _tokens(sql):
        if kind == "other":
            c = sql[start]
            if c == "(":
                depth += 1
                deepest = max(deepest, depth)
            elif c == ")":
                depth -= 1
            elif c in _OPERATOR_CHARS:
                operators += 1
        elif kind == "word" and sql[start:end].upper() in _OPERATOR_WORDS:
            operators += 1
    if deepest > MAX_NESTING:
        return f"refused: parentheses nested {deepest} deep; clwl query takes at most {MAX_NESTING}"
    if operators > MAX_OPERATORS:
        return (f"refused: the statement has {operators:,} operators; clwl query takes at most "
                f"{MAX_OPERATORS:,} (an IN list is one: WHERE msg_id IN ('a', 'b', ...))")
    return None


def _refusal(message: str) -> str | None:
    """clwl query's one line for DataFusion's refusal of a statement that is not a read, else None."""
    m = _REFUSAL.search(message)
    if not m:
        return None
    what = m.group(2).strip()
    return (f"refused: {what} is not a read ({m.group(1)}); clwl query only runs reading statements "
            f"(SELECT, WITH, EXPLAIN, DESCRIBE, SHOW, VALUES)")


def _read_only_options():
    from datafusion import SQLOptions

    return SQLOptions().with_allow_ddl(False).with_allow_dml(False).with_allow_statements(False)


def _session():
    """A DataFusion session of its own per query: SHOW TABLES and information_schema on, timestamps in UTC, and
    no URL tables (``SELECT * FROM '/etc/passwd'`` is not a table)."""
    from datafusion import SessionConfig, SessionContext

    config = (SessionConfig().with_information_schema(True)
              .set("datafusion.execution.time_zone", "+00:00"))
    return SessionContext(config)


def run_query(sql: str, lake: Path):
    """The answer as a pyarrow Table. Only reading statements run: the engine refuses every other plan
    (:func:`_read_only_options`); statements too large or deep for it are refused before it sees them."""
    problem = size_problem(sql)
    if problem:
        raise QueryError(problem)
    lake = lake_root(lake)
    if not (has_prefix(lake) if is_object_store(lake) else lake.is_dir()):
        raise QueryError(f"no lake at {lake} (give --lake DIR, or set CLWL_LAKE)")
    try:
        import datafusion  # noqa: F401
        import deltalake  # noqa: F401
    except ImportError as exc:
        raise QueryError(f"the datafusion, deltalake and pyarrow packages are needed ({exc}); install the "
                         f"'pipeline' extra") from None
    from clwl.published import PublishedError

    ctx = _session()
    options = _read_only_options()
    gold = Lake(lake).layer("gold")
    try:  # gold tables are read at the versions of the last finished publish, all from one reading of the file
        published = Lake(lake).published()
    except PublishedError as exc:
        raise QueryError(str(exc)) from None
    tables = discover_tables(lake)
    for name, path in list(tables.items()):
        version = None
        if path.parent == gold:
            if not published.visible(path.name):  # its first publish has not finished
                del tables[name]
                continue
            version = published.version(path.name)
        try:  # the log checked first: deltalake reads it itself, and a FIFO there would hang it
            if is_object_store(lake):  # scanned by Arrow's own S3 file system (open_delta): the engine's own
                ctx.register_dataset(name, open_delta(path, version).to_pyarrow_dataset())  # has no store
            else:
                ctx.register_table(name, open_delta(path, version))
        except LakeFileError as exc:  # names the damaged file already
            raise QueryError(str(exc)) from None
        except Exception as exc:
            raise QueryError(f"cannot read the Delta table {path}: {_one_line(exc)}") from None
    _register_views(ctx, lake, tables)
    rewritten: set[str] = set()
    while True:
        try:
            return ctx.sql_with_options(sql, options).to_arrow_table()
        except Exception as exc:
            refused = _refusal(str(exc))
            if refused:
                raise QueryError(refused) from None
            literal = _unparsed_timestamp(str(exc))
            fixed = _with_seconds(literal) if literal is not None and literal not in rewritten else None
            if fixed is not None:  # '2026-11-20 14:00' compared with a timestamp: the same instant, with seconds
                rewritten.add(literal)
                sql = _replace_string_literal(sql, literal, fixed)
                continue
            hint = ""
            if "not found" in str(exc):
                hint = f" (tables in {lake}: {', '.join(sorted(tables)) or 'none'})"
            elif literal is not None:
                hint = f" ({TIMESTAMP_HINT})"
            raise QueryError(f"bad SQL: {_one_line(exc)}{hint}") from None


def _register_views(ctx, lake: Path, tables: dict[str, Path]) -> None:
    """Each table read through a view (``bronze.put_records``: clwl.put_records) is the view under its names:
    its stored rows are registered under a name of their own only while the view is made."""
    for stored_key, events_key in VIEWS.values():
        stored_path, events_path = Lake(lake).table(stored_key), Lake(lake).table(events_key)
        names = [n for n, p in tables.items() if p == stored_path]
        events = next((n for n, p in tables.items() if p == events_path), None)
        if not names or events is None:
            continue
        hidden = names[0] + STORED_SUFFIX
        ctx.register_view(hidden, ctx.table(names[0]))
        view = ctx.sql(view_sql(hidden, events, ctx.table(hidden).schema().names, ctx.table(events).schema().names))
        ctx.deregister_table(hidden)
        for name in names:
            ctx.deregister_table(name)
            ctx.register_view(name, view)


# ------------------------------------------------------------------------------------------- timestamps
# DataFusion (through Arrow's parser) reads '2026-11-20 14:00:00' compared with a timestamp column as that instant
# in UTC, but not '2026-11-20 14:00': it wants seconds. A literal it failed on is given them and the query re-run.
# Only a text DataFusion itself failed to read as a timestamp is rewritten (wherever it appears in the query), so
# other strings stay as written.

TIMESTAMP_HINT = ("timestamps are written 'YYYY-MM-DD HH:MM[:SS]', UTC unless an offset follows: "
                  "held_from < '2026-11-20 14:00'")
_TIMESTAMP_PARSE_ERROR = re.compile(r"Error parsing timestamp from '((?:[^']|'')*)'")
_TIMESTAMP_WITHOUT_SECONDS = re.compile(
    r"(?P<hour>\d{4}-\d{2}-\d{2}[ T]\d{2})(?P<minute>:\d{2})?(?P<zone>Z|[+-]\d{2}(?::?\d{2})?)?")


def _unparsed_timestamp(message: str) -> str | None:
    """The literal in DataFusion's "Error parsing timestamp from '...'", or None for any other error."""
    m = _TIMESTAMP_PARSE_ERROR.search(message)
    return m.group(1) if m else None


def _with_seconds(literal: str) -> str | None:
    """``'2026-11-20 14:00'`` -> ``'2026-11-20 14:00:00'`` (also ``T``, an hour alone, a zone); None when the
    literal is not a timestamp short of its seconds."""
    m = _TIMESTAMP_WITHOUT_SECONDS.fullmatch(literal.strip())
    if not m:
        return None
    return f"{m['hour']}{m['minute'] or ':00'}:00{m['zone'] or ''}"


def _replace_string_literal(sql: str, literal: str, replacement: str) -> str:
    """``sql`` with every single-quoted string whose text is ``literal`` replaced by ``replacement`` (neither
    contains a quote); quoted names, comments and other strings are left as they are."""
    parts, last = [], 0
    for kind, start, end in _tokens(sql):
        if kind == "string" and sql[start + 1:end - 1] == literal:
            parts += [sql[last:start], f"'{replacement}'"]
            last = end
    return "".join(parts) + sql[last:]


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 400 else text[:397] + "..."


# ------------------------------------------------------------------------------------------------ output


def to_jsonable(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, dt.datetime):
        return v.isoformat()
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return v.total_seconds()
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, decimal.Decimal):
        return float(v) if v.is_finite() else None
    if isinstance(v, bytes):
        return base64.b64encode(v).decode("ascii")
    if isinstance(v, dict):
        return {str(k): to_jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and all(isinstance(p, tuple) and len(p) == 2 for p in v):  # an Arrow map: [(key, value), ...]
            return {str(k): to_jsonable(x) for k, x in v}
        return [to_jsonable(x) for x in v]
    if isinstance(v, tuple):
        return [to_jsonable(x) for x in v]
    return v


def _map_columns(table) -> set[str]:
    import pyarrow.types as pt

    return {f.name for f in table.schema if pt.is_map(f.type)}


def _value(v: Any, is_map: bool) -> Any:
    if is_map and isinstance(v, list):  # Arrow maps come back as [(key, value), ...]
        return {str(k): to_jsonable(x) for k, x in v}
    return to_jsonable(v)


def write_json(table, out: TextIO) -> None:
    """One JSON object per row (timestamps ISO-8601, maps as objects, NaN as null). JSON escapes C0 controls
    itself; the other characters a terminal acts on (C1 controls, U+202E) are written as JSON escapes too."""
    maps = _map_columns(table)
    for row in table.to_pylist():
        line = json.dumps({k: _value(v, k in maps) for k, v in row.items()}, ensure_ascii=False)
        if not line.isprintable():  # only inside strings: the same value to a JSON reader
            line = "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in line)
        out.write(line + "\n")


def _text(v: Any) -> str | None:
    """A cell as one line of text (None stays None): strings as they are, anything else as JSON."""
    if v is None:
        return None
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return " ".join(text.split())


def _rows(table) -> list[list[str | None]]:
    maps = _map_columns(table)
    return [[_text(_value(v, k in maps)) for k, v in row.items()] for row in table.to_pylist()]


def write_csv(table, out: TextIO) -> None:
    """A header line, then one line per row; NULL is an empty field, nothing is cut. Names and cells are escaped
    (clwl.terminal.printable) as on every terminal line: a value from the landing must not drive the terminal."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([printable(name) for name in table.column_names])
    writer.writerows([["" if c is None else printable(c) for c in r] for r in _rows(table)])


def write_table(table, out: TextIO, wide: bool = False) -> int:
    """An aligned text table (numbers to the right) and a row count; a cell longer than MAX_CELL characters is
    cut unless ``wide``. Returns how many cells were cut."""
    from tabulate import tabulate

    cut = 0

    def shown(text: str | None) -> str:
        nonlocal cut
        if text is None:
            return "NULL"
        text = printable(text)  # a file name or record value from the landing must not drive the terminal
        if wide or len(text) <= MAX_CELL:
            return text
        cut += 1
        return text[: MAX_CELL - 3] + "..."

    rows = [[shown(c) for c in r] for r in _rows(table)]
    align = ["right" if _is_numeric(f.type) else "left" for f in table.schema]
    if table.num_columns:
        out.write(tabulate(rows, headers=[printable(name) for name in table.column_names], tablefmt="simple",
                           disable_numparse=True, colalign=align) + "\n")
    out.write(f"({len(rows)} row{'' if len(rows) == 1 else 's'})\n")
    return cut


def _is_numeric(t) -> bool:
    import pyarrow.types as pt

    return pt.is_integer(t) or pt.is_floating(t) or pt.is_decimal(t)

"""SQL over the lake's Delta tables, without a JVM: the engine of ``clwl query`` (the command is clwl/cli/query.py).

Every Delta table at ``<lake>/<layer>/<table>`` (a folder with a ``_delta_log``) is addressable by its bare name
(``routing_replay``, ``quarantine``, ...); when two layers hold the same name the bare name is the gold one,
then silver, then bronze, and every table is also addressable as ``<layer>_<table>`` (``silver_message_events``).
The gold tables are read at the versions ``<lake>/gold/_published.json`` names (clwl/lake/published.py): all from
the last publish that finished, even while another one is writing.

The engine is Apache DataFusion (the ``datafusion`` package) over delta-rs tables (``deltalake``, handed to it as
table providers): no JVM and no pyspark import. Its SQL is DataFusion's (PostgreSQL-like), not Spark SQL. The
engine itself refuses every plan that is not a read (:func:`run_query`).
"""

from __future__ import annotations

import base64
import contextlib
import csv
import datetime as dt
import decimal
import json
import math
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from clwl.lake.door import (
    LAYERS,
    Lake,
    LakeFileError,
    is_delta_table,
    snapshot,
)
from clwl.lake.put_records import STORED_SUFFIX, VIEWS, view_sql
from clwl.lake.storage import list_folders, store_for
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
    for layer, table, path in sorted(found, key=lambda f: (rank(f[0]), f[0], f[1])):
        if layer in LAYERS:  # a run's own folders (staging/, validation/) never stand in for a layer's table
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
#: 1+1+...`` with 8,000 terms, 16 KB; 4,000 UNION ALLs; ``1::INT`` cast 10,000 times) overflows a thread's stack
#: and kills the process (SIGSEGV). Statements are bounded before the engine sees them, far below where it crashed
#: (measured with datafusion 55: 2,000 terms of every form above still ran). Nesting (parentheses, ``NOT NOT``,
#: array literals) the engine's own parser bounds: past 50 levels it answers RecursionLimitExceeded.
MAX_SQL_CHARS = 65_536
MAX_OPERATORS = 1_000
MAX_NESTING = 48  # parentheses and brackets; the engine's own parser stops at 50 levels of recursion
#: The operators counted in the whole text, strings and comments included (:func:`size_problem`).
MAX_OPERATOR_MARKS = 2_000
_OPERATOR_CHARS = frozenset("+-*/%|&^<>=!~#@?")
#: Words that join two operands (or add one to a chain: ``x IS NULL IS NULL``) in the engine's parser.
_OPERATOR_WORDS = frozenset({"AND", "OR", "XOR", "NOT", "UNION", "INTERSECT", "EXCEPT", "JOIN", "LIKE", "ILIKE",
                             "RLIKE", "REGEXP", "SIMILAR", "BETWEEN", "IS", "IN", "CASE", "WHEN", "DIV", "COLLATE",
                             "AT", "OVERLAPS", "OPERATOR"})
#: Every operator character, ``:`` (a ``::`` cast is two), ``[`` (a subscript) and operator word anywhere in the
#: text, however a reader splits it into strings and comments.
_OPERATOR_MARK = re.compile(r"[-+*/%|&^<>=!~#@?:\[]|(?<![A-Z_])(?:" + "|".join(sorted(_OPERATOR_WORDS))
                            + r")(?![A-Z0-9_$])")
#: DataFusion's refusal ("DML not supported: COPY") -> what clwl query says. Its plan node names are kept.
_REFUSAL = re.compile(r"(DDL|DML|Statement) not supported: ([A-Za-z ]+)")


def _tokens(sql: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of each token of ``sql`` outside comments, read as the engine's tokenizer (sqlparser,
    DataFusion's generic dialect) reads them: ``string`` (single-quoted, the quotes included; ``''`` is a quote,
    a backslash is itself), ``literal`` (any other string: ``E'...'`` with backslash escapes, ``$$...$$`` and
    ``$tag$...$tag$``), ``name`` (double-quoted or backquoted), ``word``, ``semicolon``, ``cast`` (``::``),
    ``other`` (any other non-space character). Block comments nest. One pass: linear in the text. Only for
    counting (:func:`size_problem`) and for rewriting a timestamp literal DataFusion itself failed on; never to
    decide what may run."""
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "eE" and sql.startswith("'", i + 1):  # E'...': a backslash escapes the next character
            j = i + 2
            while j < n:
                if sql[j] == "\\":
                    j += 2
                elif sql[j] != "'":
                    j += 1
                elif j + 1 < n and sql[j + 1] == "'":
                    j += 2
                else:
                    break
            yield "literal", i, min(j + 1, n)
            i = j + 1
        elif c in "'\"`":  # a string or a quoted name; doubled quotes escape
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
        elif c == "$":  # $$...$$ or $tag$...$tag$ (else a placeholder such as $1)
            m = _DOLLAR_TAG.match(sql, i)
            if m and len(m.group(0)) > 1 and m.group(0).endswith("$"):  # a lone $ opens nothing
                close = sql.find(m.group(0), m.end())
                end = n if close < 0 else close + len(m.group(0))
                yield "literal", i, end
                i = end
            else:
                j = m.end() if m else i + 1
                yield "word", i, j
                i = j
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif sql.startswith("/*", i):  # block comments nest: /* /* */ still a comment */
            depth, i = 1, i + 2
            while i < n and depth:
                if sql.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif sql.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == ";":
            yield "semicolon", i, i + 1
            i += 1
        elif sql.startswith("::", i):
            yield "cast", i, i + 2
            i += 2
        elif c.isalpha() or c == "_":
            j = i + 1
            while j < n and (sql[j].isalnum() or sql[j] in "_$"):
                j += 1
            yield "word", i, j
            i = j
        else:
            if not c.isspace():
                yield "other", i, i + 1
            i += 1


_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]*)\$?")


def size_problem(sql: str) -> str | None:
    """Why ``sql`` is too big or too deep for the engine to plan safely (one line), or None.

    Two counts, so that no spelling passes more than the engine takes. The operators and nesting outside
    strings and comments, as :func:`_tokens` reads them, are the limits a user meets and is told about. But a
    scanner of ours can read a string or comment differently from the engine's tokenizer (nested comments,
    ``$$`` and ``E''`` strings once hid 20,000 operators from it), so every operator mark in the whole text is
    counted too, whatever quotes or comments it may sit in, against a bound twice as high: the engine cannot see
    more operators than that, however it splits the text. So a statement whose strings and comments hold operator
    characters by the thousand is refused too; a reading of the lake's tables has no need of them."""
    if not sql.strip():
        return "no SQL statement given"
    if len(sql) > MAX_SQL_CHARS:
        return f"refused: the statement has {len(sql):,} characters; clwl query takes at most {MAX_SQL_CHARS:,}"
    operators = depth = deepest = 0
    for kind, start, end in _tokens(sql):
        if kind == "other":
            c = sql[start]
            if c in "([":
                depth += 1
                deepest = max(deepest, depth)
                operators += c == "["  # a subscript: x['a']['a']... is a chain like 1+1+...
            elif c in ")]":
                depth -= 1
            elif c in _OPERATOR_CHARS:
                operators += 1
        elif kind == "cast" or (kind == "word" and sql[start:end].upper() in _OPERATOR_WORDS):
            operators += 1
    if deepest > MAX_NESTING:
        return f"refused: parentheses and brackets nested {deepest} deep; clwl query takes at most {MAX_NESTING}"
    if operators > MAX_OPERATORS:
        return (f"refused: the statement has {operators:,} operators; clwl query takes at most "
                f"{MAX_OPERATORS:,} (an IN list is one: WHERE msg_id IN ('a', 'b', ...))")
    marks = len(_OPERATOR_MARK.findall(sql.upper()))
    if marks > MAX_OPERATOR_MARKS:
        return (f"refused: the statement has {marks:,} operator characters and words counting those inside strings "
                f"and comments; clwl query takes at most {MAX_OPERATOR_MARKS:,}")
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


#: Each query's bounds (``clwl query --timeout`` and ``--memory``): a statement small enough to plan can still
#: run for ever (``generate_series(1, 1e11)``, a recursive CTE without an end) or want more memory than the
#: machine has (a sort of such a series).
DEFAULT_TIMEOUT = 60  # seconds
DEFAULT_MEMORY_MB = 2048  # the engine's working memory: sorts, joins, aggregations


class _TimedOut(Exception):
    """Raised by the alarm that ends a query at its time limit (:func:`_alarm`)."""


def time_limit_message(seconds: float) -> str:
    return f"stopped: the query ran past its time limit of {seconds:g} s (--timeout SECONDS gives it more)"


def memory_limit_message(mb: int) -> str:
    return f"stopped: the query needs more than its {mb:,} MiB of memory (--memory MIB gives it more)"


def _session(memory_mb: int):
    """A DataFusion session of its own per query: SHOW TABLES and information_schema on, timestamps in UTC, no
    URL tables (``SELECT * FROM '/etc/passwd'`` is not a table), at most ``memory_mb`` of working memory and no
    spill files: a sort or join past it fails ("Resources exhausted") rather than writing temporary files."""
    from datafusion import RuntimeEnvBuilder, SessionConfig, SessionContext

    config = (SessionConfig().with_information_schema(True)
              .set("datafusion.execution.time_zone", "+00:00"))
    runtime = RuntimeEnvBuilder().with_disk_manager_disabled().with_greedy_memory_pool(memory_mb << 20)
    return SessionContext(config, runtime)


@contextlib.contextmanager
def _alarm(seconds: float | None) -> Iterator[None]:
    """Raise :class:`_TimedOut` in this thread after ``seconds``. The engine looks for signals about once a
    second while a plan runs, so this ends a running query; a step that never looks (planning, one huge
    function call) is ended by the command's watchdog instead (clwl/cli/query.py). Only the main thread gets
    signals: elsewhere there is no alarm."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum, frame):
        raise _TimedOut()

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_query(sql: str, lake: Path, *, timeout: float | None = DEFAULT_TIMEOUT,
              memory_mb: int = DEFAULT_MEMORY_MB):
    """The answer as a pyarrow Table. Only reading statements run: the engine refuses every other plan
    (:func:`_read_only_options`); statements too large or deep for it are refused before it sees them; a query
    is stopped after ``timeout`` seconds (None: never) or past ``memory_mb`` of working memory."""
    problem = size_problem(sql)
    if problem:
        raise QueryError(problem)
    try:
        with _alarm(timeout):
            return _answer(sql, lake, memory_mb)
    except _TimedOut:
        raise QueryError(time_limit_message(timeout)) from None


def _answer(sql: str, lake: Path, memory_mb: int):
    door = Lake.of(lake)  # the command's, handed down, or one for the whole query
    lake = door.root
    if not store_for(lake).is_folder(lake):
        raise QueryError(f"no lake at {lake} (give --lake DIR, or set CLWL_LAKE)")
    try:
        import datafusion  # noqa: F401
        import deltalake  # noqa: F401
    except ImportError as exc:
        raise QueryError(f"the datafusion, deltalake and pyarrow packages are needed ({exc}); install the "
                         f"'pipeline' extra") from None
    from clwl.lake.published import PublishedError

    ctx = _session(memory_mb)
    options = _read_only_options()
    gold = door.layer("gold")
    try:  # gold tables are read at the versions of the last finished publish, all from one reading of the file
        published = door.published()
    except PublishedError as exc:
        raise QueryError(str(exc)) from None
    tables = discover_tables(lake)
    for name in sorted(published.tables):  # a published table is read there or not at all: never another copy
        if tables.get(f"gold_{name}") != gold / name:
            raise QueryError(f"{_published_table(name, published)} is unreadable: no Delta table at {gold / name} "
                             f"(the lake is damaged; clwl published lists what is missing)")
    for name, path in list(tables.items()):
        version = None
        if path.parent == gold:
            if not published.visible(path.name):  # its first publish has not finished
                del tables[name]
                continue
            version = published.version(path.name)
        try:  # the log checked first: deltalake reads it itself, and a FIFO there would hang it
            snapshot(path, version).register(ctx, name)  # on an object store: scanned by Arrow's own S3 file system
        except LakeFileError as exc:  # names the damaged file already
            raise QueryError(str(exc)) from None
        except Exception as exc:
            what = (f"{_published_table(path.name, published)} is unreadable" if version is not None
                    else f"cannot read the Delta table {path}")
            raise QueryError(f"{what}: {_one_line(exc)}") from None
    _register_views(ctx, door, tables)
    rewritten: set[str] = set()
    while True:
        try:
            return ctx.sql_with_options(sql, options).to_arrow_table()
        except _TimedOut:
            raise
        except Exception as exc:
            refused = _refusal(str(exc))
            if refused:
                raise QueryError(refused) from None
            if "Resources exhausted" in str(exc):
                raise QueryError(memory_limit_message(memory_mb)) from None
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


def _published_table(name: str, published) -> str:
    return f"the published table {name} (version {published.tables[name]} in {published.gold}/_published.json)"


def _register_views(ctx, lake: Lake, tables: dict[str, Path]) -> None:
    """Each table read through a view (``bronze.put_records``: clwl.lake.put_records) is the view under its names:
    its stored rows are registered under a name of their own only while the view is made."""
    for stored_key, events_key in VIEWS.values():
        stored_path, events_path = lake.table(stored_key), lake.table(events_key)
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

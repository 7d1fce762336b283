"""``clwl query SQL [--lake DIR] [--format table|csv|json] [--wide] [--whatif NAME] [--timeout SECONDS]
[--memory MIB]``: the command; the engine is clwl.lake.query (no JVM). ``clwl published [--lake DIR] [--json]``:
what is published, and how any other reader reads exactly that (clwl.lake.door.reader_recipes)."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from clwl.cli.argtypes import whole_number
from clwl.cli.exit_codes import EXIT_INPUT
from clwl.cli.extras import QUERY_MODULES
from clwl.cli.options import LAKE_LOCATION
from clwl.cli.task import LakeTask, TaskError
from clwl.lake.door import Lake
from clwl.lake.lake_files import local_folder_exists
from clwl.lake.query import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT,
    FORMATS,
    MAX_CELL,
    QueryError,
    memory_limit_message,
    run_query,
    time_limit_message,
    write_csv,
    write_json,
    write_table,
)
from clwl.lake.storage import is_object_store, list_folders, store_for
from clwl.terminal import say


def add_query_command(subparsers) -> argparse.ArgumentParser:
    """Register ``clwl query`` on the ``clwl`` subparsers; the handler is :class:`QueryTask`."""
    q = subparsers.add_parser(
        "query", help="answer SQL on the lake's Delta tables (no JVM)",
        description="Run SQL on the lake's Delta tables without starting a JVM. Every table at "
                    "<lake>/<layer>/<table> is addressable by its bare name (routing_replay, stuck_messages, "
                    "distribution, run_summary, quarantine, ...; gold wins, then silver, then bronze, when "
                    "names clash) and as <layer>_<table>. The SQL dialect is Apache DataFusion's (through the "
                    "deltalake package); SHOW TABLES lists what is there. Timestamps are UTC: "
                    "held_from < '2026-11-20 14:00' (seconds may be left out).",
        epilog="example: clwl query \"SELECT qmgr, count(*) AS n FROM routing_replay WHERE run_date = '2026-11-20' "
               "GROUP BY qmgr ORDER BY qmgr\"")
    q.add_argument("sql", metavar="SQL", help="the query")
    LAKE_LOCATION.add(q)
    q.add_argument("--format", choices=FORMATS, default="table",
                   help=f"table (the default): aligned columns, cells cut at {MAX_CELL} characters unless --wide; "
                        f"csv: a header line and one line per row; json: one JSON object per row (timestamps "
                        f"ISO-8601)")
    q.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
    q.add_argument("--wide", action="store_true", help="table format: show every cell whole")
    q.add_argument("--whatif", metavar="NAME",
                   help="the tables of the what-if run NAME (<lake>/whatif/NAME) instead of the published ones")
    q.add_argument("--timeout", type=whole_number(1), default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"stop the query after SECONDS (default: {DEFAULT_TIMEOUT})")
    q.add_argument("--memory", type=whole_number(16), default=DEFAULT_MEMORY_MB, metavar="MIB",
                   help=f"the engine's working memory (sorts, joins, aggregations) in MiB; the query is also stopped "
                        f"when the process grows by twice that (default: {DEFAULT_MEMORY_MB})")
    q.set_defaults(func=QueryTask.main)
    return q


class QueryTask(LakeTask):
    command = "query"
    readers = (*QUERY_MODULES, "tabulate")  # tabulate: the table format

    def resolve_lake(self):
        """The lake, or with --whatif the what-if run's own folder in it. A lake with nothing there is not refused
        here: the query says which table it does not find."""
        self.require(self.readers)
        lake = self.given_lake()
        store_for(lake.root).is_folder(lake.root)  # a name too long, a folder on the way not searchable: one line
        name = getattr(self.args, "whatif", None)
        if name is None:
            return lake
        import re

        from clwl.analyses.whatif import NAME_PATTERN

        if not re.match(NAME_PATTERN, name):
            raise TaskError(f"--whatif {name!r}: not a what-if name")
        known = list_folders(lake.layer("whatif"))
        if name not in known:
            raise TaskError(f"no what-if {name!r} in {lake} (what-ifs: {', '.join(known) or 'none'})")
        return lake.whatif(name)

    def failures(self):
        return (QueryError,)

    def compute(self):
        with _watchdog(self.args.timeout, self.args.memory):
            return run_query(self.args.sql, self.lake, timeout=self.args.timeout, memory_mb=self.args.memory)

    def render(self, table) -> None:
        if table.num_rows == 0:  # a date the lake does not hold: say which it does (on stderr: the answer stays)
            absent = absent_dates(self.args.sql, self.lake)
            if absent:
                say(f"clwl query: 0 rows; {absent}", sys.stderr)
        if self.args.format == "json":
            write_json(table, sys.stdout)
        elif self.args.format == "csv":
            write_csv(table, sys.stdout)
        else:
            cut = write_table(table, sys.stdout, wide=self.args.wide)
            if cut:  # said on stderr so that the table itself stays the answer
                print(f"clwl query: {cut} cell{'' if cut == 1 else 's'} cut at {MAX_CELL} characters; --wide shows "
                      f"them whole", file=sys.stderr)


#: How long past --timeout the watchdog waits for the engine to stop by itself (it looks for the alarm about once a
#: second) before it ends the process.
_GRACE = 5.0


@contextmanager
def _watchdog(timeout: float, memory_mb: int) -> Iterator[None]:
    """End the process (one line, exit 2) when the query runs past ``timeout`` + a grace, or the process grows by
    more than twice ``memory_mb``. The engine's alarm and memory pool stop most queries cleanly (clwl.lake.query); what
    they cannot see, no Python can interrupt either: planning a large statement, one function call building a
    2 GB string (``repeat('x', 2000000000)``), all in native code without a point to stop at."""
    done = threading.Event()
    deadline = time.monotonic() + timeout + _GRACE
    most = _resident_bytes() + (2 * memory_mb << 20)  # over what the interpreter and the libraries hold already

    def watch() -> None:
        while not done.wait(0.05):
            line = (time_limit_message(timeout) if time.monotonic() > deadline
                    else memory_limit_message(memory_mb) if _resident_bytes() > most else None)
            if line:
                os.write(2, f"clwl query: {line}\n".encode())
                os._exit(EXIT_INPUT)  # nothing has been written to stdout yet; nothing to flush or roll back

    watcher = threading.Thread(target=watch, name="clwl-query-watchdog", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()


def _resident_bytes() -> int:
    """The memory this process holds now (Linux: /proc), else the most it has held (getrusage)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
def absent_dates(sql: str, lake) -> str | None:
    """For a query that found nothing: the dates its SQL names (``'YYYY-MM-DD'``, or the date of a timestamp
    literal) that are no run date of the lake, with the run dates it holds (published in gold/_published.json,
    else ingested in silver.ingest_files). None when every date named is held, none is named, or the lake's
    dates cannot be read."""
    import re

    named = sorted(set(re.findall(r"'(\d{4}-\d{2}-\d{2})(?:[ T][^']*)?'", sql)))
    if not named:
        return None
    try:
        from clwl.lake.published import read_published

        lk = Lake.of(lake)
        held = set(read_published(lk.layer("gold")).dates)
        if not held:
            if lk.exists("silver.ingest_files"):
                held = {str(d) for d in lk.rows("silver.ingest_files", ["run_date"]).column("run_date").to_pylist()}
    except Exception:  # the lake's dates are a hint: a lake that cannot say them gets none
        return None
    missing = [d for d in named if d not in held]
    if not missing:
        return None
    which = "is not a run date" if len(missing) == 1 else "are not run dates"
    return (f"{', '.join(missing)} {which} of {lake} (run dates it holds: {', '.join(sorted(held)) or 'none'})")


def add_published_command(subparsers) -> argparse.ArgumentParser:
    """Register ``clwl published``: the versions gold/_published.json names, with statements for other readers."""
    q = subparsers.add_parser(
        "published", help="the published version of each gold table, and how Spark, Trino or deltalake read it",
        description="Print the version of each gold table that the last finished publish wrote "
                    "(<lake>/gold/_published.json), with a Spark SQL, PySpark, Trino and deltalake statement "
                    "pinned to it. Delta has no multi-table commit: a reader of the latest versions may see a "
                    "publish that was killed halfway (until the next command that writes the lake rolls it "
                    "back); a reader of these versions never does. No JVM.",
        epilog="example: clwl published --lake lake --json")
    LAKE_LOCATION.add(q)
    q.add_argument("--json", action="store_true", help="one JSON object: tables, their versions and statements")
    q.add_argument("--trino-schema", default="clwl", metavar="NAME",
                   help="the Trino schema the tables are registered in (default: clwl)")
    q.set_defaults(func=PublishedTask.main)
    return q


class PublishedTask(LakeTask):
    command = "published"
    readers = ()  # the pointer is JSON; the recipes are text
    json_indent = 2

    def resolve_lake(self):
        """The lake whose gold folder holds something (not the lake's readers: the pointer is plain JSON)."""
        lake = self.given_lake()
        gold = lake.layer("gold")
        # Locally the gold folder is enough (an empty one too); an object store has no empty folders: a table.
        there = bool(list_folders(gold)) if is_object_store(gold) else local_folder_exists(gold)
        if not there:
            raise TaskError(f"no gold tables in {lake} (give --lake DIR, or set CLWL_LAKE)")
        return lake

    def compute(self) -> dict:
        from clwl.lake.door import reader_recipes

        return reader_recipes(self.lake.layer("gold"), self.args.trino_schema)

    def json_document(self, recipes: dict) -> dict:
        return recipes

    def render_text(self, recipes: dict) -> None:
        # the lake's path was typed by the user; dates, run ids and table names are read from _published.json
        say(f"published in {recipes['gold']}" + ("" if recipes["pointer"] else " (no _published.json: latest "
                                                                                 "versions)"))
        for date, run_id in sorted(recipes["dates"].items()):
            say(f"  {date}: {run_id}")
        for name, t in recipes["tables"].items():
            say()
            say(f"{name}: version {t['version']}")
            for reader in ("spark_sql", "pyspark", "trino", "deltalake"):
                say(f"  {reader:<10} {t[reader]}")
        for name, t in recipes["missing"].items():
            say()
            say(f"{name}: version {t['version']} MISSING: {t['reason']} ({t['path']})")
        if recipes["missing"]:
            say("", sys.stderr)
            say(f"note: the lake is damaged: {', '.join(recipes['missing'])} cannot be read at the published "
                f"version; clwl query refuses to answer until it is restored", sys.stderr)
        if recipes["unsettled"]:
            say("", sys.stderr)
            say(f"note: a publish did not finish ({'; '.join(recipes['unsettled'])}); a reader of the latest "
                f"versions sees it until the next clwl run, clwl ingest or DAG task rolls it back", sys.stderr)

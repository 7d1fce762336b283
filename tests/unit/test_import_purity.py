"""Import purity: which layer may import which.

- The engine (every module under clwl/ except the command line clwl.cli and clwl/__main__.py) never loads pyspark,
  py4j, airflow or the pipeline package spark/, neither when it is imported nor in a function (lazy imports).
- The command line sits on top: nothing in the engine, spark/ or dags/ imports clwl.cli, so no import cycle can
  pass through it (the one there was: clwl/pipeline_cli.py -> spark/ingest.py -> its __main__ -> back).
- The command line itself loads Spark only inside the pipeline handlers: ``clwl route --help`` loads none of it.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pyspark", "py4j", "airflow", "spark")  # top-level packages the engine never loads
ENTRY_POINTS = ("clwl.cli", "clwl.__main__")  # command-line code: may import anything, lazily


def _is_entry_point(module: str) -> bool:
    return any(module == e or module.startswith(e + ".") for e in ENTRY_POINTS)


def _modules(package: str) -> dict[str, Path]:
    """Module name -> file, for every module of ``package`` (a folder under ROOT), found without importing any."""
    found: dict[str, Path] = {}

    def walk(folder: Path, prefix: str) -> None:
        found[prefix] = folder / "__init__.py"
        for info in pkgutil.iter_modules([str(folder)]):
            name = f"{prefix}.{info.name}"
            if info.ispkg:
                walk(folder / info.name, name)
            else:
                found[name] = folder / f"{info.name}.py"

    walk(ROOT / package, package)
    return found


def _dag_modules() -> dict[str, Path]:
    return {f"dags.{p.stem}": p for p in sorted((ROOT / "dags").glob("*.py"))}


def _imports(module: str, path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (functions too), as absolute names. ``from a import b`` counts
    as importing both ``a`` and ``a.b`` (b may be a submodule)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from .x import y, from .. import z
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def _engine_modules() -> dict[str, Path]:
    return {m: p for m, p in _modules("clwl").items() if not _is_entry_point(m)}


def test_the_walk_finds_the_engine_and_the_command_line():
    # Guards the tests below against passing on an empty walk.
    engine, everything = _engine_modules(), _modules("clwl")
    assert {"clwl", "clwl.engine.router", "clwl.lake.query", "clwl.parse", "clwl.generate", "clwl.generate.landing"} <= set(engine)
    assert {"clwl.cli", "clwl.cli.route", "clwl.cli.pipeline", "clwl.cli.query", "clwl.cli.generate",
            "clwl.cli.argtypes", "clwl.cli.exit_codes", "clwl.__main__"} <= set(everything) - set(engine)


def test_importing_every_engine_module_loads_no_spark_airflow_or_command_line():
    engine = sorted(_engine_modules())
    code = (
        "import importlib, json, sys\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})\n"
        "cli = sorted(m for m in sys.modules if m == 'clwl.cli' or m.startswith('clwl.cli.'))\n"
        "missing = [n for n in sys.argv[1:] if n not in sys.modules]\n"
        "print(json.dumps({'heavy': heavy, 'cli': cli, 'missing': missing}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *engine], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"heavy": [], "cli": [], "missing": []}


# The one module below the command line that reaches into spark/: ``clwl check`` runs the ingest's own parse task
# body (spark/ingest/parse_tasks.py, whose rows are built against the Spark tables' schemas), imported inside its
# function so that importing clwl.analyses.check loads none of it; pyspark never (tests/cli/test_check.py runs the
# check with pyspark blocked). The ingest's discovery, task plan and trace zone live in clwl.landing.discovery.
PURE_INGEST = {"clwl.analyses.check": {"spark.ingest", "spark.ingest.parse_landing_file"}}


def test_no_engine_module_imports_spark_airflow_or_the_command_line_even_lazily():
    bad = {}
    for module, path in _engine_modules().items():
        allowed = PURE_INGEST.get(module, set())
        wrong = sorted(n for n in _imports(module, path)
                       if (n.split(".")[0] in HEAVY and n not in allowed) or _is_entry_point(n))
        if wrong:
            bad[module] = wrong
    assert bad == {}
    assert {n for n in _imports("clwl.analyses.check", ROOT / "clwl" / "analyses" / "check.py")
            if n.startswith("spark")} \
        == PURE_INGEST["clwl.analyses.check"]  # the allowance is used, and no more of spark/ than it names


# Only the report needs the pipeline extra's pandas, matplotlib and jinja2; the readers of the lake that run
# without Spark (clwl check, clwl explain, the silver readers, the table registry) load nothing beyond the
# standard library and clwl when imported (deltalake and pyarrow when they read).
REPORT_ONLY = ("pandas", "matplotlib", "jinja2")
LIGHT = ("clwl.analyses.check", "clwl.analyses.explain", "clwl.lake.silver", "clwl.lake.registry")


def test_only_the_report_package_imports_pandas_matplotlib_or_jinja2():
    users = sorted(m for m, p in _modules("clwl").items()
                   if any(n.split(".")[0] in REPORT_ONLY for n in _imports(m, p)))
    assert users and all(m.startswith("clwl.report.") for m in users), users
    # nothing else of clwl imports the report (the pipeline's report stage and the DAGs do, from outside)
    importers = sorted(m for m, p in _modules("clwl").items()
                       if not m.startswith("clwl.report") and any(n.startswith("clwl.report") for n in _imports(m, p)))
    assert importers == []


def test_the_lake_readers_without_spark_import_only_the_standard_library_and_clwl():
    heavy = (*HEAVY, *REPORT_ONLY, "deltalake", "pyarrow", "numpy")
    code = (
        "import importlib, json, sys\n"
        "sys.modules['pyspark'] = None\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
        f"print(json.dumps(sorted(m for m, v in sys.modules.items() if v is not None and m.split('.')[0] in "
        f"{heavy!r})))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *LIGHT], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_spark_has_no_top_level_module_that_runs_without_spark_but_its_helpers():
    """spark/ holds what needs a Spark session; of its top-level modules only the session, the configuration,
    the run object and the table and commit helpers are imported without one. The report, `clwl explain` and
    `clwl check` are clwl's (the ingest's pure parts stay in its package, spark/ingest/)."""
    top = sorted(p.stem for p in (ROOT / "spark").glob("*.py") if p.stem != "__init__")
    assert not {"report", "explain", "landing_check"} & set(top)
    assert not (ROOT / "spark" / "templates").exists()
    helpers = {"session", "config", "run", "tables", "delta_commits"}
    spark_free = [m for m in top if m not in helpers
                  and not any(n.split(".")[0] == "pyspark" for n in _imports(f"spark.{m}", ROOT / "spark" / f"{m}.py"))]
    assert spark_free == []


def test_neither_the_pipeline_nor_the_dags_import_the_command_line():
    bad = {}
    for module, path in {**_modules("spark"), **_dag_modules()}.items():
        wrong = sorted(n for n in _imports(module, path) if _is_entry_point(n))
        if wrong:
            bad[module] = wrong
    assert bad == {}


def _import_graph() -> dict[str, set[str]]:
    """Project module -> the project modules it imports (clwl, spark, dags). Importing ``a.b.c`` runs ``a`` and
    ``a.b`` first, so the packages on the way are edges too."""
    modules = {**_modules("clwl"), **_modules("spark"), **_dag_modules()}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for name in _imports(module, path):
            parts = name.split(".")
            targets.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        graph[module] = {t for t in targets if t in modules and t != module}
    return graph


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _cycles_through_the_command_line(graph: dict[str, set[str]]) -> list[str]:
    """The modules outside the command line that it reaches and that reach it back: each closes a cycle.
    (Cycles inside clwl.cli, a submodule importing its own package, are how packages work: not counted.)"""
    cli = [m for m in graph if _is_entry_point(m)]
    reached_from_cli = set().union(*(_reaches(graph, m) for m in cli))
    return sorted(m for m in reached_from_cli
                  if not _is_entry_point(m) and any(_is_entry_point(n) for n in _reaches(graph, m)))


def test_no_import_cycle_passes_through_the_command_line():
    graph = _import_graph()
    assert _cycles_through_the_command_line(graph) == []
    # Not empty by accident: the command line reaches the engine and the pipeline.
    assert {"clwl.engine.router", "clwl.lake.query", "spark.pipeline", "spark.ingest"} <= _reaches(graph, "clwl.cli")


def test_the_cycle_check_sees_the_old_cycle():
    # The shape of the cycle this layering removed: the command line's ingest module imports the pipeline, whose
    # __main__ imported it back.
    graph = {"clwl": set(), "clwl.cli": {"clwl.cli.pipeline"}, "clwl.cli.pipeline": {"clwl.cli", "spark.ingest"},
             "spark": set(), "spark.ingest": {"spark", "clwl", "clwl.cli", "clwl.cli.pipeline"}}
    assert _cycles_through_the_command_line(graph) == ["spark.ingest"]


def test_relative_imports_are_resolved(tmp_path):
    # `from ..cli import route` inside clwl/parse/x.py names clwl.cli.route: the static checks above see it.
    path = tmp_path / "x.py"
    path.write_text("from ..cli import route\nfrom . import common\nimport spark.config\n")
    assert _imports("clwl.parse.x", path) == {"clwl.cli", "clwl.cli.route", "clwl.parse", "clwl.parse.common",
                                              "spark.config"}


def test_the_command_line_loads_spark_and_deltalake_only_in_the_handlers():
    modules = sorted(m for m in _modules("clwl") if _is_entry_point(m) and m != "clwl.__main__")
    heavy = (*HEAVY, "deltalake", "pyarrow")
    code = (
        "import importlib, json, sys\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
        "from clwl.cli import main\n"
        "try:\n"
        "    main(['route', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *modules], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "usage: clwl route" in proc.stdout
    assert json.loads(proc.stdout.splitlines()[-1]) == []


# ----------------------------------------------------------------------------------------------------------
# The generator's simulation is the pipeline tests' oracle

# What the pipeline tests compare the pipeline with: clwl/generate/routing.py, the generator's own plain reading
# of the algorithm, clwl/generate/simulate.py, the traffic it routes, with clwl/generate/landing.py, which writes
# its verdicts to _generate.json (tests/spark/test_pipeline_generated.py, test_generated_trace_pipeline.py); and samples/make_samples.py, which
# routes the samples with its own replay into samples/facts.json (tests/unit/test_replay.py,
# test_samples_reallocation.py). An agreement means something only while they share no code with what they check.
ORACLES = ("clwl.generate.routing", "clwl.generate.simulate", "clwl.generate.landing")
ORACLE_SCRIPT = ROOT / "samples" / "make_samples.py"
GENERATOR = "clwl.generate"


def _is_engine(module: str) -> bool:
    """The code under test: every module of clwl/ but the package itself (empty), the generator and the command
    line (the router, algorithm, replay, candidates, state, view, xmitq, what-if, parsers, lake, query ...)."""
    return (module.split(".")[0] == "clwl" and module != "clwl" and not _is_entry_point(module)
            and not (module == GENERATOR or module.startswith(GENERATOR + ".")))


def _shared_with_the_engine(graph: dict[str, set[str]], starts: dict[str, set[str]]) -> dict[str, list[str]]:
    """Oracle -> the project modules outside the generator it reaches (transitively, lazy imports included):
    the engine, the command line, the pipeline (spark/) or the DAGs. ``starts``: oracle -> its direct imports."""
    bad = {}
    for oracle, direct in starts.items():
        reached = set(direct)
        for module in direct:
            reached |= _reaches(graph, module)
        wrong = sorted(m for m in reached
                       if _is_engine(m) or _is_entry_point(m) or m.split(".")[0] in ("spark", "dags"))
        if wrong:
            bad[oracle] = wrong
    return bad


def _project_imports(graph: dict[str, set[str]], module: str, path: Path) -> set[str]:
    """The project modules ``path`` imports directly, with the packages on the way (as in _import_graph)."""
    targets = set()
    for name in _imports(module, path):
        parts = name.split(".")
        targets.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {t for t in targets if t in graph and t != module}


def test_the_oracles_reach_nothing_of_the_engine():
    graph = _import_graph()
    starts = {m: graph[m] for m in ORACLES}
    starts["samples/make_samples.py"] = _project_imports(graph, "make_samples", ORACLE_SCRIPT)
    assert _shared_with_the_engine(graph, starts) == {}
    # Not empty by accident: the walk follows the oracles into the generator's other modules, and the engine it
    # keeps them from is there to be found.
    assert {"clwl.generate.estate", "clwl.generate.render"} <= _reaches(graph, "clwl.generate.simulate")
    assert {"clwl.generate.render", "clwl.generate.estate"} <= starts["samples/make_samples.py"]
    assert {"clwl.engine.algorithm", "clwl.engine.router", "clwl.engine.replay", "clwl.engine.candidates", "clwl.engine.state", "clwl.engine.view",
            "clwl.engine.xmitq", "clwl.analyses.whatif", "clwl.parse.puts"} <= {m for m in graph if _is_engine(m)}


def test_the_oracle_check_sees_an_engine_import_two_steps_away():
    # simulate -> estate -> (lazily) clwl.engine.router: the kind of shortcut that would make the oracle agree by
    # construction. Imports of the generator's own modules and of the empty clwl package are fine.
    graph = {"clwl": set(), "clwl.generate": {"clwl"}, "clwl.generate.simulate": {"clwl.generate.estate"},
             "clwl.generate.estate": {"clwl", "clwl.generate", "clwl.engine.router"}, "clwl.engine.router": {"clwl.engine.algorithm"},
             "clwl.engine.algorithm": set(), "clwl.cli": set()}
    assert _shared_with_the_engine(graph, {"sim": {"clwl.generate.simulate"}}) == {
        "sim": ["clwl.engine.algorithm", "clwl.engine.router"]}
    assert _shared_with_the_engine(graph, {"cli": {"clwl.cli"}}) == {"cli": ["clwl.cli"]}


def test_importing_the_oracles_loads_no_engine_module():
    """The same at run time, in a fresh interpreter: what importing them loads (the static walk above also sees
    imports inside functions; this one sees what the import machinery really does, e.g. a package's __init__)."""
    code = (
        "import importlib, json, runpy, sys\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
        f"runpy.run_path({str(ORACLE_SCRIPT)!r}, run_name='not_main')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('clwl', 'spark', 'dags'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *ORACLES], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.splitlines()[-1])
    assert set(ORACLES) <= set(loaded)
    assert [m for m in loaded if _is_engine(m) or _is_entry_point(m) or m.split(".")[0] != "clwl"] == []


# ----------------------------------------------------------------------------------------------------------
# No import cycle at all, and private names stay private


def _module_graph() -> dict[str, set[str]]:
    """Project module -> the project modules its imports name (clwl, spark, dags), at the top or in a function.
    Unlike _import_graph, not the packages on the way: a package's __init__ importing its own modules is how
    packages work, not a cycle."""
    modules = {**_modules("clwl"), **_modules("spark"), **_dag_modules()}
    return {m: {n for n in _imports(m, p) if n in modules and n != m} for m, p in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph``: each set of modules that reach one another (more than one module)."""
    reach = {m: _reaches(graph, m) for m in graph}
    cycles = {tuple(sorted(n for n in reach[m] if m in reach[n])) for m in graph if m in reach[m]}
    return sorted(list(c) for c in cycles if len(c) > 1)


# Cycles still there, each waiting for its modules' owner: clwl.lake.door's Lake.published imports clwl.lake.published (in
# the method), which imports clwl.lake.door (80205fd). No new one.
KNOWN_CYCLES: list[list[str]] = []


def test_no_module_takes_part_in_an_import_cycle():
    graph = _module_graph()
    assert [c for c in _cycles(graph) if c not in KNOWN_CYCLES] == []
    # Not empty by accident: the runmqsc parser hands z/OS output to the z/OS parser, and both use the shared lexer.
    assert {"clwl.parse.zos", "clwl.parse.runmqsc_lexer", "clwl.parse.record_kinds"} <= graph["clwl.parse.mqsc"]
    assert {"clwl.parse.runmqsc_lexer", "clwl.parse.record_kinds"} <= graph["clwl.parse.zos"]


def test_the_cycle_check_sees_the_runmqsc_zos_cycle():
    # The shape of the cycle the shared lexer removed (issue 26 item 5): clwl.parse.zos imported the scanner from
    # clwl.parse.mqsc, which imported clwl.parse.zos (in a function) to hand it z/OS output.
    graph = {"clwl.parse.common": set(), "clwl.parse.mqsc": {"clwl.parse.common", "clwl.parse.zos"},
             "clwl.parse.zos": {"clwl.parse.common", "clwl.parse.mqsc"}, "clwl.engine.view": {"clwl.parse.mqsc"}}
    assert _cycles(graph) == [["clwl.parse.mqsc", "clwl.parse.zos"]]


def _private_imports() -> dict[tuple[str, str], list[str]]:
    """``(module, name)`` -> the other modules that import that private name of it (``from m import _name``)."""
    found: dict[tuple[str, str], list[str]] = {}
    for module, path in {**_modules("clwl"), **_modules("spark"), **_dag_modules()}.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            source = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__") and source != module:
                    found.setdefault((source, alias.name), []).append(module)
    return found


# Private names other modules import (issue 26 item 5): none. A name another module needs is public, with a
# docstring saying what it is for.
STILL_IMPORTED_PRIVATE: set[tuple[str, str]] = set()  # none left: shared names are public


def test_no_new_private_name_is_imported_across_modules():
    found = _private_imports()
    assert {k: v for k, v in found.items() if k not in STILL_IMPORTED_PRIVATE} == {}
    # The parsers share through public names (clwl.parse.runmqsc_lexer, clwl.parse.record_kinds).
    assert [k for k in found if k[0].startswith("clwl.parse")] == []


# ----------------------------------------------------------------------------------------------------------
# The wings of clwl/ and their floors (README, "Architecture")

#: Bottom to top. A module may import its own wing and any wing on a lower floor, never one above: the engine
#: stands on the landing's formats and the parsers, the lake's readers build the engine's timelines, the analyses
#: read the lake, the report draws the analyses, and the pipeline (spark/), the DAGs and the command line sit on
#: top. ``base`` is what every floor uses: clwl/__init__.py, the run dates, the terminal rule, the MQSC keywords.
FLOORS = ("base", "parse", "landing", "engine", "lake", "analyses", "report", "pipeline", "command line")
WINGS = {"parse": "parse", "landing": "landing", "engine": "engine", "lake": "lake", "analyses": "analyses",
         "report": "report", "generate": "generator", "cli": "command line"}
#: The generator stands apart: it shares nothing with the code it checks (the oracle tests above); only the
#: command line imports it.
MAX_TOP_MODULES = 12


def _wing(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "spark":
        return "pipeline"
    if parts[0] == "dags" or parts[:2] == ["clwl", "__main__"]:
        return "command line"
    return WINGS.get(parts[1], "base") if len(parts) > 1 else "base"


def _upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    floor = {w: i for i, w in enumerate(FLOORS)}
    bad = []
    for module, targets in graph.items():
        a = _wing(module)
        for target in targets:
            b = _wing(target)
            if a == b or (module, target) in ALLOWED_UPWARD:
                continue
            if "generator" in (a, b):
                if b == "generator" and a != "command line" or a == "generator" and b != "base":
                    bad.append((module, target))
            elif floor[b] > floor[a]:
                bad.append((module, target))
    return sorted(bad)


#: The one import that runs up a floor, inside a function: ``clwl check`` parses each file with the ingest's own
#: task body (see PURE_INGEST).
ALLOWED_UPWARD = {("clwl.analyses.check", "spark.ingest")}


def test_no_import_runs_up_a_floor():
    graph = _module_graph()
    assert _upward_imports(graph) == []
    # Not empty by accident: every wing is there, and the floors are crossed downward.
    assert {_wing(m) for m in graph} == set(FLOORS) | {"generator"}
    assert ("clwl.lake.silver", "clwl.engine.replay") in {(m, t) for m, ts in graph.items() for t in ts}


def test_the_floor_check_sees_an_upward_import():
    graph = {"clwl.engine.router": {"clwl.analyses.lint"}, "clwl.analyses.lint": {"clwl.engine.router"},
             "clwl.lake.door": {"spark.tables"}, "clwl.generate.simulate": {"clwl.engine.router"}}
    assert _upward_imports(graph) == [("clwl.engine.router", "clwl.analyses.lint"),
                                      ("clwl.generate.simulate", "clwl.engine.router"),
                                      ("clwl.lake.door", "spark.tables")]


def test_clwl_keeps_few_modules_beside_its_wings():
    top = sorted(p.name for p in (ROOT / "clwl").glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top
    wings = sorted(p.name for p in (ROOT / "clwl").iterdir() if (p / "__init__.py").is_file())
    assert wings == ["analyses", "cli", "engine", "generate", "lake", "landing", "parse", "report"]

"""The quality gate's results as a site: Great Expectations Data Docs of one run of one date, built from the results
the run kept (``<lake>/validation/<run_id>/<table>.json``, spark/publish.py), without Spark and without running
any expectation again.

The kept files hold GX's own results (every expectation's configuration and result, with the unexpected values of
a failed one); they are put into the validation-results store of an ephemeral GX context (in memory), the suites
of ``expectations/`` into its suite store, and GX's site builder writes the site into a local folder:
``index.html`` (every suite of the date and its validation result) and one page per suite and per result. The
report writes it to ``<reports>/<date>/quality/``; a blocked run, which has no report, to
``<reports>/<date>/quality-blocked/`` (docs/report.md).

GX is imported here only when a site is built (it loads pandas and pyspark's Python package, never a JVM), and
its loggers are kept at WARNING: its INFO lines are no part of the user's terminal.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from clwl.lake.reports import BLOCKED_QUALITY_DIR, QUALITY_DIR  # noqa: F401  (the folders' names: one home)
from clwl.lake.storage import list_prefix, read_object

#: Files of a run's validation folder that are not a suite's result: the publish's verdict and versions.
NOT_RESULTS = ("_publish.json",)

_STATIC_REF = re.compile(r"static/([\w./-]+)")
_gx_lock = threading.Lock()  # GX's context and renderers keep module state: one site at a time per process


class QualityDocsError(RuntimeError):
    """The Data Docs could not be built (one line: which file, and why)."""


@dataclass(frozen=True)
class KeptResult:
    """One suite's kept result: the table it validated and the JSON the gate wrote."""

    suite: str
    data: dict
    file: str


def validation_folder(validation_root, run_id: str, run_date: str):
    """Where the gate kept a run's results for a date (spark/publish.py): ``<validation>/<run_id>``, or
    ``<validation>/<run_id>/<date>`` for a second date published under the same run id. A Path, or a location on
    the object store."""
    folder = validation_root / str(run_id)
    nested = folder / str(run_date)
    return nested if list_prefix(nested) else folder


def kept_results(folder) -> list[KeptResult]:
    """Every suite result in a run's validation folder (a Path or an object-store location; not its sub-folders:
    those are other dates'), by suite name."""
    out = []
    for name, _ in list_prefix(folder):
        if "/" in name or not name.endswith(".json") or name in NOT_RESULTS:
            continue
        where = folder / name
        try:
            data = json.loads(read_object(where).data.decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise QualityDocsError(f"{where}: not a readable validation result ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise QualityDocsError(f"{where}: not a validation result (no 'results' list)")
        out.append(KeptResult(str(data.get("table") or name[:-len(".json")]), data, str(where)))
    return sorted(out, key=lambda r: r.suite)


def _quiet_gx() -> None:
    # Set before GX is imported, so its import-time INFO lines are held back too.
    for name in ("great_expectations", "great_expectations.render", "great_expectations.data_context"):
        logging.getLogger(name).setLevel(logging.WARNING)


def build_quality_docs(validation_folder, out: Path, run_id: str, run_date: str) -> Path:
    """Build the Data Docs of the results kept in ``validation_folder`` (a Path, or a location on the object store)
    into the local folder ``out`` (replaced): every suite as it was validated and its result. Returns
    ``out/index.html``."""
    results = kept_results(validation_folder)
    if not results:
        raise QualityDocsError(f"{validation_folder}: no validation result to build Data Docs from")
    _quiet_gx()
    with _gx_lock:
        return _build(results, Path(out), run_id, run_date)


def _build(results: list[KeptResult], out: Path, run_id: str, run_date: str) -> Path:
    import great_expectations as gx
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.data_context.types.resource_identifiers import (
        ExpectationSuiteIdentifier,
        ValidationResultIdentifier,
    )

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    context = gx.get_context(mode="ephemeral")
    context.add_data_docs_site("clwl", {
        "class_name": "SiteBuilder",
        "show_how_to_buttons": False,
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(out)},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
    })
    run = RunIdentifier(run_name=str(run_id), run_time=_validated_at(results))
    for kept in results:
        try:
            validation, configs = _validation_result(kept, run, run_date)
            # The suite as it was validated (every expectation's configuration is in its result): its own page.
            suite = gx.ExpectationSuite(name=kept.suite, expectations=[c.to_domain_obj() for c in configs])
        except Exception as exc:  # noqa: BLE001 - any shape GX refuses: one line naming the file
            raise QualityDocsError(f"{kept.file}: a validation result Great Expectations cannot read "
                                   f"({type(exc).__name__}: {str(exc)[:200]})") from None
        key = ValidationResultIdentifier(ExpectationSuiteIdentifier(name=kept.suite), run, f"{kept.suite}-{run_date}")
        context.validation_results_store.set(key, validation)
        context.suites.add(suite)
    context.build_data_docs(site_names=["clwl"])
    index = out / "index.html"
    # GX logs a page it could not render and goes on: a missing page is an error here.
    missing = [kept.suite for kept in results
               if not (out / "validations" / Path(*kept.suite.split("."))).is_dir()]
    if not index.is_file() or missing:
        raise QualityDocsError(f"{out}: Great Expectations wrote no "
                               + (f"page for {', '.join(missing)}" if missing else "index.html"))
    _drop_unused_static(out)
    return index


def _validation_result(kept: KeptResult, run, run_date: str):
    """GX's validation result of one kept result, and the expectation configurations in it."""
    from great_expectations.core.expectation_validation_result import (
        ExpectationSuiteValidationResult,
        ExpectationValidationResult,
    )
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    results, configs = [], []
    for r in kept.data["results"]:
        cfg = {k: v for k, v in (r.get("expectation_config") or {}).items() if k not in ("id", "rendered_content")}
        config = ExpectationConfiguration(**cfg) if cfg else None
        if config is not None:
            configs.append(config)
        results.append(ExpectationValidationResult(
            success=r.get("success"), expectation_config=config, result=r.get("result") or {},
            meta=r.get("meta") or {}, exception_info=r.get("exception_info")))
    validation = ExpectationSuiteValidationResult(
        success=bool(kept.data.get("success")), results=results, suite_name=kept.suite,
        statistics=kept.data.get("statistics") or {},
        meta={"run_id": run.to_json_dict(), "active_batch_definition": {"data_asset_name": kept.suite},
              "batch_spec": {"run_date": run_date}, "validation_time": kept.data.get("validated_at")})
    return validation, configs


def _validated_at(results: list[KeptResult]):
    """When the gate ran (the earliest ``validated_at`` kept), for GX's run time; now when none is kept."""
    import datetime as dt

    times = []
    for kept in results:
        try:
            at = dt.datetime.fromisoformat(str(kept.data.get("validated_at")))
        except ValueError:
            continue
        if at.tzinfo is not None:  # the gate writes UTC with its offset
            times.append(at)
    return min(times) if times else dt.datetime.now(dt.timezone.utc)


def _drop_unused_static(site: Path) -> None:
    """GX copies 4 MB of fonts and walkthrough animations into every site; the pages use a few files of it
    (the favicon): keep those, so a date's site is kilobytes, not megabytes, on the lake."""
    static = site / "static"
    used = set()
    for page in site.rglob("*.html"):
        for ref in _STATIC_REF.findall(page.read_text(encoding="utf-8", errors="replace")):
            used.add(ref)
    for f in sorted(static.rglob("*"), reverse=True):
        if f.is_file() and f.relative_to(static).as_posix() not in used:
            f.unlink()
        elif f.is_dir() and not any(f.iterdir()):
            f.rmdir()

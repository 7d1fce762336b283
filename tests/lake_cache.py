"""A lake a session fixture builds, kept between test sessions for exactly the code that built it.

`make test` and `make test-extended` are two pytest sessions; both read the samples lake that `clwl run` publishes
(tests/conftest.py ``samples_lake``), and building it is a pipeline run of minutes on 2 cores. The first session
keeps a copy under pytest's cache folder (``.pytest_cache/d/clwl-lakes/``), named by a digest of everything that
decides the lake's content: the product's code (clwl/, spark/, expectations/), the samples, the dependency pins,
the fixture's own module, the Python and pyspark versions and the settings that change what a run writes
(:data:`CONTENT_ENV`). Change any of them and the digest changes, so the next session builds afresh. Every session gets its own copy of the kept
lake (a consumer can never alter the kept one), with the run's printed output naming that copy.

Without pytest's cache (``-p no:cacheprovider``) nothing is kept: each session builds, as before.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
#: The environment variables that change the rows a run writes (the traces' zone, the put file reader, a test's
#: stop or kill point).
CONTENT_ENV = ("CLWL_TRACE_TZ", "CLWL_PUT_CSV_READER", "CLWL_TEST_STOP_AFTER_PUT_PHASE", "CLWL_TEST_KILL_BEFORE_REPORT",
               "CLWL_TEST_KILL_AFTER_GOLD_WRITES")
#: What decides a lake's content besides the fixture's arguments: the product, its inputs, its pins.
SOURCES = ("clwl", "spark", "expectations", "samples", "pyproject.toml", "constraints.txt", "tests/conftest.py",
           "tests/lake_cache.py")


def code_digest(extra: str = "") -> str:
    """A digest of :data:`SOURCES` (file names and bytes, in sorted order; caches and compiled files left out), the
    interpreter and pyspark versions, the :data:`CONTENT_ENV` settings, and ``extra``."""
    h = hashlib.sha256()
    for name in SOURCES:
        base = ROOT / name
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for p in files:
            if "__pycache__" in p.parts or p.suffix in (".pyc", ".pyo"):
                continue
            h.update(p.relative_to(ROOT).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    try:
        from importlib.metadata import version

        h.update(version("pyspark").encode())
    except Exception:  # noqa: BLE001  (no pyspark: the digest just lacks it; the build would fail anyway)
        pass
    h.update(platform.python_version().encode() + str(ROOT).encode())
    # The settings that change what a run writes; not where the lake or landing is (the fixture names both), not
    # the Spark process settings (pyspark itself sets SPARK_LOCAL_IP once a session has started), and not the
    # locations the DAG tests put in the environment while they run.
    env = sorted((k, os.environ.get(k)) for k in CONTENT_ENV)
    h.update(repr(env).encode() + extra.encode())
    return h.hexdigest()[:24]


def relocate(value: Any, old: str, new: str) -> Any:
    """``value`` with every text or path that starts with ``old`` (where the lake was built) starting with ``new``
    instead: strings, paths, and those inside lists, tuples, dicts and dataclasses (rebuilt, not altered)."""
    import dataclasses

    if isinstance(value, str):
        return new + value[len(old):] if value.startswith(old) else value.replace(old, new)
    if isinstance(value, Path):
        return Path(relocate(str(value), old, new))
    if isinstance(value, (list, tuple)):
        return type(value)(relocate(v, old, new) for v in value)
    if isinstance(value, dict):
        return {k: relocate(v, old, new) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: relocate(getattr(value, f.name), old, new)
                                             for f in dataclasses.fields(value) if f.init})
    return value


def kept_lake(config: Any, name: str, target: Path, build: Callable[[Path], Any]) -> tuple[Path, Any, bool]:
    """The lake ``build(lake) -> result`` makes at ``target / "lake"`` (``result``: what the build printed or
    returned; picklable), from pytest's cache when a session kept one for the same digest, with the paths in
    ``result`` naming this session's copy. Returns (lake, result, from_cache). ``config``: the pytest config (its
    ``cache`` may be None)."""
    import pickle

    lake = target / "lake"
    cache = getattr(config, "cache", None)
    if cache is None:
        return lake, build(lake), False
    folder = Path(cache.mkdir("clwl-lakes"))
    kept = folder / f"{name}-{code_digest(name)}"
    if (kept / "complete").is_file():
        shutil.copytree(kept / "lake", lake, symlinks=True)
        result = pickle.loads((kept / "result.pickle").read_bytes())
        return lake, relocate(result, (kept / "built_at.txt").read_text(encoding="utf-8"), str(lake)), True
    result = build(lake)
    # Kept only when complete: a copy in a scratch folder, renamed into place, with its marker written last.
    for stale in folder.glob(f"{name}-*"):
        if stale.name.removeprefix(f"{name}-").isalnum():  # samples-<digest>, not samples-day-<digest>
            shutil.rmtree(stale, ignore_errors=True)
    scratch = kept.with_name(kept.name + f".part{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(lake, scratch / "lake", symlinks=True)
    (scratch / "result.pickle").write_bytes(pickle.dumps(result))
    (scratch / "built_at.txt").write_text(str(lake), encoding="utf-8")
    try:
        scratch.rename(kept)
    except OSError:  # another session kept the same lake meanwhile
        shutil.rmtree(scratch, ignore_errors=True)
        return lake, result, False
    (kept / "complete").write_text("", encoding="utf-8")
    return lake, result, False

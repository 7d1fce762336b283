"""The landing staged on the lake's object store for a cluster's executors (spark/ingest/landing_stage.py), without
Spark: each file of a sample day put under a scratch prefix of the tests' SeaweedFS, then parsed as a parse task on
another host would parse it (copied to a local temporary file first), gives the summary and the rows (positions,
quarantine) of parsing the landing file itself; a file the driver listed and the executor does not have fails the
task with one message naming the host and the path, instead of being quarantined as unreadable."""

from __future__ import annotations

import glob
import os
import socket
import tempfile

import pytest

from clwl.lake.storage import lake_root, list_prefix
from clwl.landing.discovery import discover_landing
from spark.config import REPO_ROOT
from spark.ingest.landing_stage import STAGED, LandingNotHere, readable_here, stage_landing
from spark.ingest.parse_tasks import parse_landing_file

pytestmark = [pytest.mark.objectstore]

DAY = "2026-11-20"


def _parsed(spec):
    summary, rows = parse_landing_file(spec, "stage-test")
    return summary, rows


def test_a_staged_day_parses_as_the_landing_does(object_store, monkeypatch, tmp_path):
    object_store.use(monkeypatch)
    _, files, _ = discover_landing(REPO_ROOT / "samples" / "landing", [DAY])
    scratch = lake_root(object_store.lake_uri("stage")) / "_ingest" / "run-x"
    messages = []
    staged = stage_landing(files, scratch, messages.append)

    read = [f for f in files if not f.skipped]
    assert len(read) >= 10
    stored = {key for key, _ in list_prefix(scratch / STAGED)}  # relative to the prefix listed
    assert stored == {f.source_file for f in read}
    assert messages == [f"staged {len(read)} landing files ({sum(f.size_bytes for f in read) / 2**20:,.1f} MiB) "
                        f"on the lake's store for the executors"]
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "clwl-landing-*")))
    for original, there in zip(files, staged):
        assert there.source_file == original.source_file and there.content_sha256 == original.content_sha256
        assert there.path == str(scratch / STAGED / original.source_file) or original.skipped
        with readable_here(there) as here:
            assert not here.path.startswith("s3://") or original.skipped
            got = _parsed(here)
        assert got == _parsed(original), original.source_file
    # each local copy was removed after its parse
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "clwl-landing-*"))) == before


def test_a_local_file_the_executor_does_not_have_fails_the_task_naming_it(tmp_path):
    from tests.unit.test_parser_fuzz import landing_file

    spec = landing_file(tmp_path, "puts.csv", b"not even a header\n")
    os.unlink(spec.path)
    with pytest.raises(LandingNotHere) as caught:
        with readable_here(spec):
            pass
    message = str(caught.value)
    assert spec.source_file in message and spec.path in message and socket.gethostname() in message
    assert "\n" not in message


def test_a_local_lake_in_local_mode_reads_the_landing_in_place(tmp_path):
    from tests.unit.test_parser_fuzz import landing_file

    spec = landing_file(tmp_path, "puts.csv", b"x\n")
    with readable_here(spec) as here:
        assert here is spec

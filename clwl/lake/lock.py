"""One writer per lake: the lock file ``<lake>/_lock``, held with ``fcntl.flock`` while a process writes the lake.

``clwl run`` (spark.pipeline.run_pipeline), ``clwl ingest``, every publish (spark.publish.publish) and the
Airflow tasks that write take it. A second writer does not wait by default: it stops at once with
:class:`LakeBusy`, whose message is one line naming the holder (process id, host, what it runs, since when);
the CLI prints it and exits 2. ``CLWL_LOCK_WAIT=<seconds>`` (or ``wait=``) makes it wait that long instead
(the Airflow tasks wait, see dags/clwl_dag_support.py).

The lock is the kernel's: it goes with the process, so a killed writer never leaves a stale lock behind (the
file stays, holding only the last holder's description). Within one process the lock is re-entrant (run_pipeline
holds it and the publish it calls takes it again). ``flock`` serialises processes on one host and, on most
network file systems that support it (NFS v4, CephFS), across hosts; a lake on storage without ``flock``
support gets :class:`LakeLockError`.

A lake on an object store (``s3://bucket/prefix``, clwl/lake/storage.py) has no ``flock``: there the lock is a lease,
the object ``<lake>/_lock``, written through the lake's store (clwl/lake/stores.py: a store whose server checks a
write's condition, :attr:`~clwl.lake.stores.Store.atomic_conditions`), created with a conditional put
(``If-None-Match: *``, so two writers cannot both create it) and holding the holder's process id, host, purpose
and expiry. A thread renews it every third of :data:`LEASE_SECONDS` by a put conditional on the ETag it wrote
last; a writer that finds a lease past its expiry (its holder died without releasing it) takes it over the same
way, conditional on the stale lease's ETag, so of two such writers one wins. Release marks the lease released (conditionally, again): it is not deleted,
since S3 has no conditional delete and a plain one could remove the lease a next writer just took. A holder
whose lease was taken over meanwhile (it could not renew for a whole lease: a stalled process, a lost network)
is told at the end of its block (LakeLockError). Expiry is read against the reader's clock: the hosts' clocks
must agree to well within a lease (seconds, as NTP keeps them).

A lease whose holder was killed (``kill -9``, a crash) would block every writer until it expires. The lease
records, besides the holder's pid and host, the process's start time, the host's boot id and the pid namespace
(where the system tells them: /proc on Linux); a writer on the same host, boot and pid namespace whose holder's
pid is gone, or is now another process (a start time that differs: the pid was reused), takes the lease over at
once, as it takes over an expired one (:func:`holder_gone`). A holder on another host cannot be seen from here:
the refusal says when its lease expires and that ``CLWL_LOCK_WAIT`` waits for it.

Importable without pyspark (the CLI, `clwl query` and the DAG files use it).
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import json
import os
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Optional

from clwl.lake.door import LOCK_FILE
from clwl.lake.storage import LakeLocation, StorageConflict, StorageError, StoredObject, lake_root, store_for
from clwl.lake.stores import Store

WAIT_ENV = "CLWL_LOCK_WAIT"
#: How long a lease on an object store lasts without renewal (renewed every third of it while held).
LEASE_SECONDS = 120.0
#: Sets the lease for the process (seconds): shorter lets the next writer take over sooner after a holder died,
#: at more renewals while held; it must stay well above the clock difference between hosts and a renewal's time.
LEASE_ENV = "CLWL_LEASE_SECONDS"
#: The shortest lease accepted: a renewal every third of it must fit a slow store's round trip.
MIN_LEASE_SECONDS = 15.0

_held: dict[str, list] = {}  # lock file path -> [fd, depth]: the locks this process holds
_guard = threading.Lock()


class LakeLockError(RuntimeError):
    """The lake lock cannot be taken (one line, for stderr)."""


class LakeBusy(LakeLockError):
    """Another process holds the lake lock."""

    def __init__(self, message: str, holder: dict):
        super().__init__(message)
        self.holder = holder


def lock_path(lake: Path | str | LakeLocation) -> Path | LakeLocation:
    root = lake_root(lake)
    return store_for(root).absolute(root) / LOCK_FILE


def holds_lock(lake: Path | str) -> bool:
    """Whether this process holds the lake's lock."""
    with _guard:
        return str(lock_path(lake)) in _held


def _wait_default() -> float:
    raw = os.environ.get(WAIT_ENV, "").strip()
    try:
        return max(0.0, float(raw)) if raw else 0.0
    except ValueError:
        raise LakeLockError(f"{WAIT_ENV}={raw!r}: not a number of seconds") from None


def _lease_default() -> float:
    raw = os.environ.get(LEASE_ENV, "").strip()
    if not raw:
        return LEASE_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        raise LakeLockError(f"{LEASE_ENV}={raw!r}: not a number of seconds") from None
    if not MIN_LEASE_SECONDS <= seconds <= 3600:
        raise LakeLockError(f"{LEASE_ENV}={raw!r}: a lease must last {MIN_LEASE_SECONDS:.0f} to 3600 seconds")
    return seconds


def _describe(holder: dict) -> str:
    if not holder:
        return "another process (it has not written its name into the lock file yet)"
    return (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')} ({holder.get('purpose') or 'clwl'}), "
            f"since {holder.get('since', '?')}")


def _lease_expiry(holder: dict) -> str:
    """When a lease record expires, in the refusal's words: ``its lease expires at T (in N s) unless ...``."""
    try:
        left = float(holder.get("expires_at", 0)) - time.time()
    except (TypeError, ValueError):
        left = None
    when = holder.get("expires") or "?"
    if left is None:
        return f"its lease expires at {when}"
    if _judged_here(holder):
        alive = "its process is running on this host"
    else:
        alive = "if that process is gone, the next writer takes the lease over then"
    return f"its lease expires at {when} (in {max(0.0, left):.0f} s) unless renewed; {alive}"


_WAIT_HINT = f"set {WAIT_ENV}=<seconds> to wait for it"


# ------------------------------------------------------------------------------- is the holder still running?
def _read_proc(path: str) -> Optional[str]:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read(4096)
    except OSError:
        return None


def process_start(pid: int) -> Optional[str]:
    """When the process ``pid`` started, in the kernel's clock ticks since boot (Linux: field 22 of
    /proc/<pid>/stat), as text; None where the system does not say (or there is no such process). With the boot
    id it names one process for good: a pid is reused, a (pid, start time) pair within one boot is not."""
    stat = _read_proc(f"/proc/{int(pid)}/stat")
    if not stat or ")" not in stat:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[19] if len(fields) > 19 else None  # fields[0] is field 3 (state): starttime is field 22


def _boot_id() -> Optional[str]:
    text = _read_proc("/proc/sys/kernel/random/boot_id")
    return (text.strip() or None) if text else None


def _pid_namespace() -> Optional[str]:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def _pid_running(pid: int) -> bool:
    """Whether a process ``pid`` runs (a zombie, killed and not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # there, owned by another user
        pass
    except (OverflowError, ValueError):
        return False
    stat = _read_proc(f"/proc/{int(pid)}/stat")
    return not (stat and ")" in stat and stat.rsplit(")", 1)[1].split()[:1] == ["Z"])


def _judged_here(holder: dict) -> bool:
    """Whether this process can tell if the holder still runs: the same host and, where the lease recorded
    them, the same boot and pid namespace."""
    if not holder or holder.get("host") != socket.gethostname():
        return False
    return all(holder.get(key) is None or holder.get(key) == ours
               for key, ours in (("boot_id", _boot_id()), ("pid_ns", _pid_namespace())))


def _process_identity() -> dict:
    """What a lease records so that a writer on the same host can tell whether its holder still runs."""
    ident = {"pid": os.getpid(), "host": socket.gethostname()}
    for key, value in (("started", process_start(os.getpid())), ("boot_id", _boot_id()),
                       ("pid_ns", _pid_namespace())):
        if value is not None:
            ident[key] = value
    return ident


def holder_gone(holder: dict) -> Optional[str]:
    """Why the lease's holder is known to be gone (one phrase), or None when it may still run: only a holder on
    this host (same host name and, where recorded, the same boot and pid namespace) can be judged. It is gone when
    its pid is not running, or runs a process that started at another time than the holder (the pid was reused);
    a lease that recorded no start time is judged by its pid alone."""
    if not _judged_here(holder):  # another host, another boot of a host of that name, another container
        return None
    try:
        pid = int(holder.get("pid"))
    except (TypeError, ValueError):
        return None
    if pid <= 0:
        return None
    if pid == os.getpid() and holder.get("started") in (None, process_start(pid)):
        return None  # this very process (a lease it holds is re-entered, never taken over)
    if not _pid_running(pid):
        return f"pid {pid} on this host is gone"
    started = holder.get("started")
    if started is not None and process_start(pid) not in (None, started):
        return f"pid {pid} on this host is another process now (the holder's is gone)"
    return None


def read_holder(lake: Path | str) -> dict:
    """What the lock file (the lease object) says about its (last) holder; {} when it says nothing readable."""
    path = lock_path(lake)
    try:
        return _read_lease(store_for(path), path)[0]  # bounded: never a FIFO's hang; empty: not JSON, {}
    except (OSError, ValueError):
        return {}


@contextmanager
def lake_lock(lake: Path | str | LakeLocation, *, purpose: str = "clwl", wait: Optional[float] = None,
              progress: Optional[Callable[[str], object]] = None,
              lease_seconds: Optional[float] = None) -> Iterator[Path | LakeLocation]:
    """Hold ``<lake>/_lock`` for the block (creating the lake folder if needed; on an object store, a lease).

    wait: seconds to wait for another holder (default ``$CLWL_LOCK_WAIT``, else 0: :class:`LakeBusy` at once).
    progress: told once when the call starts waiting, then every minute.
    lease_seconds: an object store's lease (default ``$CLWL_LEASE_SECONDS``, else :data:`LEASE_SECONDS`).
    """
    path = lock_path(lake)
    key = str(path)
    with _guard:
        if key in _held:
            _held[key][1] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield path
        finally:
            with _guard:
                _held[key][1] -= 1
        return

    limit = _wait_default() if wait is None else max(0.0, float(wait))
    store = store_for(path)
    if store.atomic_conditions:  # an object store: no flock, a lease kept by conditional puts
        seconds = _lease_default() if lease_seconds is None else lease_seconds
        with _lease_lock(store, path, purpose, limit, progress, seconds):
            yield path
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o664)
    except OSError as exc:
        raise LakeLockError(f"cannot open the lake lock {path}: {exc.strerror or exc}") from None
    try:
        deadline = time.monotonic() + limit
        told: Optional[float] = None
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise LakeLockError(f"cannot lock {path}: {exc.strerror or exc} (does the lake's storage "
                                        f"support flock?)") from None
            holder = read_holder(lake)
            now = time.monotonic()
            if now >= deadline:
                waited = f" after waiting {limit:.0f} s" if limit else ""
                raise LakeBusy(f"the lake {path.parent} is in use by {_describe(holder)}{waited}; only one "
                               f"writer at a time: {_WAIT_HINT} (lock file {path})", holder)
            if progress is not None and (told is None or now - told >= 60):
                progress(f"waiting for the lake {path.parent}: in use by {_describe(holder)} "
                         f"(up to {deadline - now:.0f} s more)")
                told = now
            time.sleep(min(1.0, max(0.05, deadline - now)))
        info = {"pid": os.getpid(), "host": socket.gethostname(), "purpose": purpose,
                "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode("utf-8"), 0)
        with _guard:
            _held[key] = [fd, 1]
    except BaseException:
        os.close(fd)  # also releases the flock, if taken
        raise
    try:
        yield path
    finally:
        with _guard:
            _held.pop(key, None)
        os.close(fd)  # releases the lock; the file stays (removing it would race with the next holder)


# ------------------------------------------------------------------------------------ the object-store lease
class _NotALease(ValueError):
    """The lock file or lease object holds no lease record (not UTF-8, not JSON, not an object)."""


def _read_lease(store: Store, path: Path | LakeLocation) -> tuple[dict, StoredObject]:
    """The lease (or lock file) record at ``path`` and the object read (its ETag: the version a takeover
    replaces): the one reading of it, for :func:`read_holder` and a writer trying to take the lease.
    FileNotFoundError when there is none; _NotALease when it is not a record; StorageError when it cannot be read."""
    stored = store.get(path)  # bounded: never a FIFO's hang
    try:
        data = json.loads(stored.data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise _NotALease(f"{path}: not a lease record ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise _NotALease(f"{path}: not a JSON object")
    return data, stored


def _lease_bytes(info: dict, seconds: float) -> bytes:
    expires = time.time() + seconds
    record = {**info, "expires_at": expires,
              "expires": dt.datetime.fromtimestamp(expires, dt.timezone.utc).isoformat(timespec="seconds")}
    return (json.dumps(record) + "\n").encode("utf-8")


def _lease_open(holder: dict) -> bool:
    """Whether a lease record still holds the lake: not released and not past its expiry."""
    try:
        return not holder.get("released") and float(holder.get("expires_at", 0)) > time.time()
    except (TypeError, ValueError):
        return False


def _try_lease(store: Store, path: LakeLocation, info: dict, seconds: float) -> tuple[Optional[str], dict, Optional[str]]:
    """One attempt: (the ETag of our new lease, the holder it was taken over from or {}, why it could be taken
    over when its holder had not released it) or (None, the holder that has it, None)."""
    try:
        return store.put_if_absent(path, _lease_bytes(info, seconds)), {}, None
    except StorageConflict:
        pass
    try:
        holder, current = _read_lease(store, path)
    except FileNotFoundError:  # removed by hand meanwhile: the next attempt creates it
        return None, {}, None
    except _NotALease:
        raise LakeLockError(f"the lake lease {path} is not a lease record (damaged?); remove it if no writer is "
                            f"running") from None
    why = None
    if _lease_open(holder):
        why = holder_gone(holder)
        if why is None:
            return None, holder, None
    elif not holder.get("released"):
        why = "its lease expired"
    try:  # released, expired or its holder gone: take it over, conditional on exactly the version read
        return store.put_if_match(path, _lease_bytes(info, seconds), current.etag), holder, why
    except StorageConflict:  # another writer took it over first
        return None, holder, None


class _Lease:
    """A lease held: renewed by a daemon thread until released."""

    def __init__(self, store: Store, path: LakeLocation, info: dict, etag: str, seconds: float):
        self.store, self.path, self.info, self.etag, self.seconds = store, path, info, etag, seconds
        self.expires = time.time() + seconds
        self.lost: Optional[str] = None
        self._stop = threading.Event()
        self._mutex = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"clwl-lease {path}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            self.renew()

    def _write(self, info: dict, seconds: float) -> str:
        """Replace the lease with ``info`` lasting ``seconds``, conditional on the version this holder wrote last
        (StorageConflict: it was taken over); the new version."""
        return self.store.put_if_match(self.path, _lease_bytes(info, seconds), self.etag)

    def renew(self) -> None:
        with self._mutex:
            if self.lost is not None:
                return
            try:
                self.etag = self._write(self.info, self.seconds)
                self.expires = time.time() + self.seconds
            except StorageConflict:
                self.lost = (f"the lake lease {self.path} was taken over by {_describe(read_holder(self.path.parent))}"
                             f" while this process held it (not renewed within {self.seconds:.0f} s)")
            except StorageError as exc:  # the store is unreachable: retried at the next renewal, until expiry
                if time.time() >= self.expires:
                    self.lost = f"the lake lease {self.path} expired: it could not be renewed ({exc})"

    def release(self) -> Optional[str]:
        """Stop renewing and mark the lease released; what went wrong, if it was lost."""
        self._stop.set()
        self._thread.join()
        with self._mutex:
            if self.lost is None:
                info = {**self.info, "released": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
                try:
                    self._write(info, 0)
                except StorageConflict:
                    self.lost = f"the lake lease {self.path} was taken over by another writer before it was released"
                except StorageError:  # left to expire: the next writer takes it over then
                    pass
            return self.lost


@contextmanager
def _lease_lock(store: Store, path: LakeLocation, purpose: str, limit: float,
                progress: Optional[Callable[[str], object]], seconds: float) -> Iterator[LakeLocation]:
    if seconds <= 0:
        raise LakeLockError(f"lease of {seconds} s: a lease must last a positive number of seconds")
    store.check_writable(path.parent)  # a store that ignored If-None-Match would let two writers in
    key = str(path)
    info = {**_process_identity(), "purpose": purpose,
            "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "lease_seconds": seconds}
    deadline = time.monotonic() + limit
    told: Optional[float] = None
    while True:
        etag, holder, why = _try_lease(store, path, info, seconds)
        if etag is not None:
            if why is not None and progress is not None:
                progress(f"the lake {path.parent}: took over the lease of {_describe(holder)}: {why}")
            break
        now = time.monotonic()
        if now >= deadline:
            waited = f" after waiting {limit:.0f} s" if limit else ""
            raise LakeBusy(f"the lake {path.parent} is in use by {_describe(holder)}{waited}; {_lease_expiry(holder)};"
                           f" only one writer at a time: {_WAIT_HINT} (lease {path})", holder)
        if progress is not None and (told is None or now - told >= 60):
            progress(f"waiting for the lake {path.parent}: in use by {_describe(holder)} "
                     f"(up to {deadline - now:.0f} s more)")
            told = now
        time.sleep(min(1.0, max(0.05, deadline - now)))
    lease = _Lease(store, path, info, etag, seconds)
    with _guard:
        _held[key] = [lease, 1]
    try:
        yield path
    finally:
        with _guard:
            _held.pop(key, None)
        lost = lease.release()
    if lost is not None:
        raise LakeLockError(lost)

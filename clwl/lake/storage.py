"""Where the lake is: a local (or mounted) folder, or an object store (``s3://bucket/prefix``), and the few object
operations the lake's promises are built on, the same for both.

The lake as a location (:class:`LakeLocation`, :func:`lake_root`):

- ``/data/lake``, ``lake``, ``file:///data/lake``: a local folder; callers keep a :class:`pathlib.Path` and today's
  code paths (``os.replace`` for the published pointer, ``flock`` for the lock);
- ``s3://bucket/prefix``: an S3 bucket or an S3-compatible server. A :class:`LakeLocation` joins like a path
  (``root / "gold" / "_published.json"``) and prints as its URI, but it is not a file-system path: a call of
  ``os``/``open`` on it fails with TypeError instead of writing a local folder named ``s3:``;
- a typo (``s3:/bucket``, ``s3//bucket``, ``s3:bucket``), an unknown scheme (``gs://``, ``s3a://``) or a bad bucket
  name: :class:`StorageError`, one line naming it.

Credentials and endpoint come from the environment only (never from a file of the repository or an argument that
a log would print); :mod:`clwl.lake.s3_env` reads them, docs/object-storage.md says what each does. The
same values go to deltalake (:func:`storage_options`), pyarrow (:func:`arrow_filesystem`) and the object
operations here (obstore: the Rust ``object_store`` crate deltalake itself uses, so the three agree).

The operations (:func:`read_object`, :func:`put_if_absent`, :func:`replace_if_match`, :func:`delete_object`,
:func:`list_prefix`) take a location; an ETag names the version of an object that was read, and a conditional write
succeeds only while the object is still that version (``If-None-Match: *`` to create, ``If-Match: <etag>`` to
replace: the server answers 412 otherwise, raised as :class:`StorageConflict`). A local location gets the same
operations over files (create with ``O_EXCL``, replace with ``os.replace``; its ETag is the file's inode, size and
modification time), so a caller can use one interface; the local lake's own promises stay with ``flock``.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from clwl.lake.lake_files import MAX_METADATA_BYTES, StorageConflict, StorageError, read_lake_file
from clwl.lake.s3_env import ENV_ACCESS_KEY, ENV_ENDPOINT, ENV_SECRET_KEY, S3Settings, s3_settings

#: Schemes of an object store this lake can live on.
OBJECT_SCHEMES = ("s3",)
#: Scheme names that a mistyped or unsupported lake URI starts with: ``s3:/x`` or ``gs://x`` is refused, never
#: taken as a local folder named ``s3:`` or ``gs:``.
KNOWN_SCHEMES = ("s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "az", "adl", "wasb", "wasbs", "hdfs", "http",
                 "https", "file", "oss", "r2", "minio")

_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")  # S3's bucket naming rules (3-63 characters)
#: ``user[:password]@`` before the host of a URI.
_USER_INFO = re.compile(r"/*[^/@]*@")


# ----------------------------------------------------------------------------------------------- locations
@dataclass(frozen=True)
class LakeLocation:
    """A location on an object store: ``s3://<bucket>/<key>`` (key: no leading or trailing slash, may be empty).
    Joins like a path (``loc / "gold"``), prints as its URI; deliberately no ``__fspath__``."""

    scheme: str
    bucket: str
    key: str = ""

    @classmethod
    def parse(cls, text: str) -> "LakeLocation":
        """The object-store location ``text`` (``s3://bucket/prefix``); StorageError for anything else."""
        root = lake_root(text)
        if not isinstance(root, LakeLocation):
            raise StorageError(f"{text}: not an object-store location (s3://bucket/prefix)")
        return root

    def __str__(self) -> str:
        return f"{self.scheme}://{self.bucket}/{self.key}" if self.key else f"{self.scheme}://{self.bucket}"

    @property
    def uri(self) -> str:
        return str(self)

    def __truediv__(self, part: str | os.PathLike) -> "LakeLocation":
        parts = [p for p in str(part).split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            raise StorageError(f"{self} / {part!r}: not a name within the lake")
        return LakeLocation(self.scheme, self.bucket, "/".join(filter(None, (self.key, *parts))))

    @property
    def name(self) -> str:
        return self.key.rsplit("/", 1)[-1]

    @property
    def parent(self) -> "LakeLocation":
        return LakeLocation(self.scheme, self.bucket, self.key.rsplit("/", 1)[0] if "/" in self.key else "")

    @property
    def is_remote(self) -> bool:
        return True

    def exists(self) -> bool:
        """Whether anything is stored under this location (a "folder": a non-empty prefix), as a reader that
        asks ``Path.exists()`` of a folder of the lake means it (the report's validation folder)."""
        return has_prefix(self)


Location = Path | LakeLocation


def lake_root(text: str | os.PathLike | LakeLocation) -> Location:
    """The lake named by ``text`` (``--lake``, ``$CLWL_LAKE``): a :class:`LakeLocation` for ``s3://bucket/prefix``,
    else a :class:`~pathlib.Path` exactly as given (``file://`` removed). StorageError, one line, for a typo of a
    URI (``s3:/bucket``, ``s3//bucket``), a scheme this lake does not support or a bad bucket name."""
    if isinstance(text, LakeLocation):
        return text
    raw = os.fspath(text) if isinstance(text, os.PathLike) else str(text)
    if not raw:  # Path("") is the working folder: a lake nobody named
        raise StorageError("an empty lake location: give a folder or s3://bucket/prefix")
    if raw.startswith("file://"):
        return Path(raw.removeprefix("file://") or "/")
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)(:/{0,3}|/{2})(.*)\Z", raw, re.S)
    if match is None or (match.group(1).lower() not in KNOWN_SCHEMES and match.group(2) != "://"):
        return Path(raw)  # a plain path (one that merely contains a colon, like "day:1", stays a path)
    scheme, sep, rest = match.group(1), match.group(2), match.group(3)
    if _USER_INFO.match(rest):  # s3://user:password@bucket: never printed, never used
        raw = f"{raw[:match.start(3)]}***@{rest.split('@', 1)[1]}"
        raise StorageError(f"{raw}: a lake location carries no credentials (they were not used); give them in "
                           f"{ENV_ACCESS_KEY} and {ENV_SECRET_KEY} (docs/object-storage.md)")
    if sep != "://":
        fixed = f"{scheme.lower()}://{rest.lstrip(':/')}"
        raise StorageError(f"{raw}: not a lake location; did you mean {fixed}? (an object store is "
                           f"scheme://bucket/prefix, a local lake a folder path)")
    if scheme not in OBJECT_SCHEMES:
        raise StorageError(f"{raw}: the scheme {scheme}:// is not supported for a lake (supported: "
                           f"{', '.join(s + '://' for s in OBJECT_SCHEMES)} or a local folder path)")
    bucket, _, key = rest.partition("/")
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise StorageError(f"{raw}: {bucket!r} is not a valid bucket name (3-63 lowercase letters, digits, dots, "
                           f"hyphens)")
    parts = key.split("/")
    if "" in parts[:-1] or any(p in (".", "..") for p in parts):
        raise StorageError(f"{raw}: the prefix {key!r} has an empty, '.' or '..' segment")
    return LakeLocation(scheme, bucket, key.strip("/"))


def is_object_store(location: Any) -> bool:
    return isinstance(location, LakeLocation)


# ----------------------------------------------------------------------------------------------- the store
def storage_options(location: Any, env: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """deltalake's ``storage_options`` for a table at ``location`` (None for a local one): the environment's
    settings spelled as deltalake's keys. It holds the secrets: pass it on, never print it."""
    if not is_object_store(location):
        return None
    s = s3_settings(env)
    opts = {"AWS_REGION": s.region, "AWS_ALLOW_HTTP": str(s.allow_http).lower(),
            "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": str(s.virtual_hosted).lower()}
    for name, value in (("AWS_ENDPOINT_URL", s.endpoint), ("AWS_ACCESS_KEY_ID", s.access_key),
                        ("AWS_SECRET_ACCESS_KEY", s.secret_key), ("AWS_SESSION_TOKEN", s.session_token)):
        if value:
            opts[name] = value
    return opts


def arrow_filesystem(location: LakeLocation, env: Mapping[str, str] | None = None) -> Any:
    """A ``pyarrow.fs.SubTreeFileSystem`` over ``location`` on Arrow's own S3 file system (no Python in Arrow's
    I/O threads: clwl.lake.door.open_delta says why that matters), with the same settings."""
    import pyarrow.fs as pafs

    s = s3_settings(env)
    kwargs: dict[str, Any] = {"region": s.region, "force_virtual_addressing": s.virtual_hosted}
    if s.access_key:
        kwargs.update(access_key=s.access_key, secret_key=s.secret_key, session_token=s.session_token)
    if s.endpoint:
        scheme, _, host = s.endpoint.partition("://")
        kwargs.update(endpoint_override=host.rstrip("/"), scheme=scheme)
    return pafs.SubTreeFileSystem(f"{location.bucket}/{location.key}".rstrip("/"), pafs.S3FileSystem(**kwargs))


def arrow_paths(paths: list[str]) -> tuple[Any, list[str]]:
    """Files named by absolute paths or ``s3://`` URIs (a Delta table's data files), as Arrow reads them: (None,
    the paths) for local files; for files on an object store, Arrow's own S3 file system over their bucket and
    the keys in it (``pyarrow.dataset.dataset(keys, filesystem=fs)``)."""
    remote = [p for p in paths if str(p).startswith("s3://")]
    if not remote:
        return None, list(paths)
    locations = [lake_root(str(p)) for p in paths]
    buckets = {loc.bucket for loc in locations if isinstance(loc, LakeLocation)}
    if len(buckets) != 1 or len(remote) != len(paths):
        raise StorageError(f"{paths[0]}: files of one read must all be in one bucket")
    return arrow_filesystem(LakeLocation("s3", buckets.pop())), [loc.key for loc in locations]


@functools.lru_cache(maxsize=16)
def _s3_store(bucket: str, settings: S3Settings) -> Any:
    from obstore.store import S3Store

    config: dict[str, Any] = {"region": settings.region, "virtual_hosted_style_request": settings.virtual_hosted}
    if settings.endpoint:
        config["endpoint"] = settings.endpoint.rstrip("/")
    if settings.access_key:
        config.update(access_key_id=settings.access_key, secret_access_key=settings.secret_key)
        if settings.session_token:
            config["session_token"] = settings.session_token
    # A few retries within seconds: a lake command facing a store that is down says so, it does not wait minutes.
    return S3Store(bucket, config=config,
                   client_options={"allow_http": settings.allow_http, "connect_timeout": "5s", "timeout": "60s"},
                   retry_config={"max_retries": 2, "retry_timeout": dt.timedelta(seconds=20)})


def _store(location: LakeLocation) -> Any:
    return _s3_store(location.bucket, s3_settings())


#: How S3 says a request was refused for its credentials or the policy, when the client reports a generic error.
_DENIED = re.compile(r"status code: 40[13]\b|<Code>(AccessDenied|SignatureDoesNotMatch|InvalidAccessKeyId|"
                     r"InvalidToken|ExpiredToken|AllAccessDisabled)</Code>")


def no_bucket(location: Any) -> StorageError:
    """The one line for a lake whose bucket is not on the store (the lake never creates a bucket)."""
    return StorageError(f"{location}: bucket {location.bucket} does not exist (the lake never creates buckets: "
                        f"create it, or check the name and {ENV_ENDPOINT})")


def check_bucket(root: "LakeLocation") -> None:
    """Refuse (StorageError, one line: ``bucket X does not exist``, access denied, ...) a lake whose bucket is not
    there, before anything is written: some S3-compatible servers create a bucket on the first put into it, and
    the lake must never do that. One list request of at most one key; checked once per bucket and process."""
    if root.bucket in _checked_buckets:
        return
    import obstore
    from obstore import exceptions as obe

    try:
        listing: Iterator = iter(obstore.list(_store(root), f"{root.key}/" if root.key else None, chunk_size=1))
        next(listing, None)
    except obe.BaseError as exc:
        raise _one_line(root, exc) from None
    except FileNotFoundError as exc:  # obstore's NotFound for a missing bucket
        raise _one_line(root, exc) from None
    _checked_buckets.add(root.bucket)


_checked_buckets: set[str] = set()


def _one_line(location: Any, exc: BaseException) -> StorageError:
    """An obstore error as one line naming the location (its message runs to a page of debug output)."""
    from obstore import exceptions as obe

    text = str(exc)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    bucket = getattr(location, "bucket", None)
    if "<Code>NoSuchBucket</Code>" in text or "NoSuchBucket" in first:
        return no_bucket(location)
    # A list request's refusal comes as a generic error: its status (403) or S3's code says what a get's says.
    if isinstance(exc, (obe.PermissionDeniedError, obe.UnauthenticatedError)) or _DENIED.search(text):
        return StorageError(f"{location}: access denied by the store (check {ENV_ACCESS_KEY}, "
                            f"{ENV_SECRET_KEY} and the policy of the bucket {bucket})")
    status = re.search(r"status code: (\d{3}[^:<]*)", text)
    why = status.group(1).strip() if status else first[:200]
    return StorageError(f"{location}: the object store refused or could not be reached ({why})")


# ------------------------------------------------------------------------------------------ the operations
@dataclass(frozen=True)
class StoredObject:
    data: bytes
    etag: str  # the version read; give it to replace_if_match


def _local_etag(path: Path) -> str:
    st = os.stat(path)
    return f"{st.st_ino:x}-{st.st_size:x}-{st.st_mtime_ns:x}"


def read_object(location: Location, limit: int = MAX_METADATA_BYTES) -> StoredObject:
    """The bytes and ETag of the object at ``location``, at most ``limit`` bytes (a lake metadata object).
    FileNotFoundError when there is none; StorageError (LakeFileError) for anything else."""
    if not is_object_store(location):
        path = Path(location)
        data = read_lake_file(path, limit)
        return StoredObject(data, _local_etag(path))
    import obstore
    from obstore import exceptions as obe

    try:
        got = obstore.get(_store(location), location.key)
        size = int(got.meta["size"])
        if size > limit:
            raise StorageError(f"{location} is {size} bytes, more than the {limit} a lake metadata object may "
                               f"have: the lake is damaged")
        return StoredObject(bytes(got.bytes()), str(got.meta["e_tag"]))
    except (FileNotFoundError, obe.NotFoundError):
        raise FileNotFoundError(str(location)) from None
    except obe.BaseError as exc:
        raise _one_line(location, exc) from None


def put_if_absent(location: Location, data: bytes) -> str:
    """Create the object ``location`` with ``data`` unless it exists (``If-None-Match: *``); its ETag.
    StorageConflict when it exists."""
    if not is_object_store(location):
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o664)
        except FileExistsError:
            raise StorageConflict(f"{path} exists already (created by another writer)") from None
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return _local_etag(path)
    import obstore
    from obstore import exceptions as obe

    try:
        return str(obstore.put(_store(location), location.key, data, mode="create")["e_tag"])
    except obe.AlreadyExistsError:
        raise StorageConflict(f"{location} exists already (created by another writer)") from None
    except obe.PreconditionError:
        raise StorageConflict(f"{location} exists already (created by another writer)") from None
    except obe.NotSupportedError:
        raise _no_conditional(location) from None
    except obe.BaseError as exc:
        raise _conditional_error(location, exc) from None


def replace_if_match(location: Location, data: bytes, etag: str) -> str:
    """Replace the object ``location`` with ``data`` only while it is still the version ``etag``
    (``If-Match``); the new ETag. StorageConflict when it was replaced, or deleted, since."""
    if not is_object_store(location):
        path = Path(location)
        try:
            if _local_etag(path) != etag:  # checked, then replaced: local writers are serialised by flock
                raise StorageConflict(f"{path} was replaced by another writer since it was read")
        except FileNotFoundError:
            raise StorageConflict(f"{path} was removed by another writer since it was read") from None
        _replace_local(path, data)
        return _local_etag(path)
    import obstore
    from obstore import exceptions as obe

    try:
        return str(obstore.put(_store(location), location.key, data, mode={"e_tag": etag})["e_tag"])
    except (obe.PreconditionError, obe.NotFoundError, FileNotFoundError):
        raise StorageConflict(f"{location} was replaced by another writer since it was read") from None
    except obe.NotSupportedError:
        raise _no_conditional(location) from None
    except obe.BaseError as exc:
        raise _conditional_error(location, exc) from None


def _conditional_error(location: Any, exc: BaseException) -> StorageError:
    """A conditional put's failure: a server that does not implement the condition says 501 NotImplemented."""
    if re.search(r"status code: 501|NotImplemented", str(exc)):
        return _no_conditional(location)
    return _one_line(location, exc)


_checked_stores: set[tuple[str, str]] = set()


def check_conditional_writes(root: LakeLocation) -> None:
    """Refuse (StorageError, one line) a store that ignores ``If-None-Match``: a second conditional create of the
    probe object ``<root>/_conditional_probe`` must be refused. Checked once per bucket and process, before the
    first lease is taken (a store that silently overwrote would let two writers both believe they hold the lake)."""
    key = (root.bucket, root.key)
    if key in _checked_stores:
        return
    check_bucket(root)  # before the probe's put: a server that makes buckets on the fly must not make the lake's
    probe = root / "_conditional_probe"
    import obstore
    from obstore import exceptions as obe

    try:
        obstore.put(_store(probe), probe.key, b"probe\n")
    except obe.BaseError as exc:
        raise _one_line(probe, exc) from None
    try:
        put_if_absent(probe, b"second\n")
    except StorageConflict:
        _checked_stores.add(key)
        return
    raise _no_conditional(root)


def _no_conditional(location: Any) -> StorageError:
    return StorageError(f"{location}: the object store does not support conditional writes (If-None-Match / "
                        f"If-Match), which the lake's pointer and lock need")


def _replace_local(path: Path, data: bytes) -> None:
    """Write ``data`` beside ``path``, fsync, then ``os.replace``: readers see the old file or the new one."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def delete_object(location: Location) -> None:
    """Remove the object ``location`` (nothing when there is none)."""
    if not is_object_store(location):
        try:
            os.unlink(Path(location))
        except FileNotFoundError:
            pass
        return
    import obstore
    from obstore import exceptions as obe

    try:
        obstore.delete(_store(location), location.key)
    except (obe.NotFoundError, FileNotFoundError):
        pass
    except obe.BaseError as exc:
        raise _one_line(location, exc) from None


def list_prefix(location: Location) -> list[tuple[str, int]]:
    """Every object under ``location`` (a folder), as (name relative to it, size), sorted; [] when none."""
    if not is_object_store(location):
        root = Path(location)
        if not root.is_dir():
            return []
        return sorted((p.relative_to(root).as_posix(), p.stat().st_size) for p in root.rglob("*") if p.is_file())
    import obstore
    from obstore import exceptions as obe

    prefix = f"{location.key}/" if location.key else ""
    try:
        return sorted((str(m["path"])[len(prefix):], int(m["size"]))
                      for batch in obstore.list(_store(location), prefix or None) for m in batch)
    except obe.BaseError as exc:
        raise _one_line(location, exc) from None


def has_prefix(location: Location) -> bool:
    """Whether anything is stored under ``location`` (a local folder that exists, or a non-empty prefix)."""
    if not is_object_store(location):
        return Path(location).exists()
    import obstore
    from obstore import exceptions as obe

    try:
        listing: Iterator = iter(obstore.list(_store(location), f"{location.key}/" if location.key else None,
                                              chunk_size=1))
        return any(len(batch) for batch in listing)
    except obe.BaseError as exc:
        raise _one_line(location, exc) from None


def put_object(location: Location, data: bytes) -> None:
    """Write the object ``location`` whole (no condition: a result file of the lake's own, e.g. a validation
    result or a report, that only the lake's writer writes). Locally: beside it, then ``os.replace``."""
    if not is_object_store(location):
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        _replace_local(path, data)
        return
    import obstore
    from obstore import exceptions as obe

    try:
        obstore.put(_store(location), location.key, data)
    except obe.BaseError as exc:
        raise _one_line(location, exc) from None


def put_file(location: Location, source: Path) -> None:
    """Write the local file ``source`` as the object ``location``, streamed from the file (a multipart upload when
    large: never whole in memory); to a local location, a copy."""
    if not is_object_store(location):
        target = Path(location)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return
    import obstore
    from obstore import exceptions as obe

    try:
        obstore.put(_store(location), location.key, Path(source))
    except obe.BaseError as exc:
        raise _one_line(location, exc) from None


def get_file(location: Location, target: Path) -> None:
    """Write the object ``location`` into the local file ``target``, streamed (never whole in memory); from a
    local location, a copy."""
    if not is_object_store(location):
        shutil.copyfile(Path(location), target)
        return
    import obstore
    from obstore import exceptions as obe

    try:
        with open(target, "wb") as fh:
            for chunk in obstore.get(_store(location), location.key).stream():
                fh.write(chunk)
    except obe.BaseError as exc:
        raise _one_line(location, exc) from None


def list_folders(location: Location) -> list[str]:
    """The names of the folders directly under ``location`` (on an object store: the common prefixes), sorted;
    [] when there is none."""
    if not is_object_store(location):
        root = Path(location)
        return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    import obstore
    from obstore import exceptions as obe

    prefix = f"{location.key}/" if location.key else None
    try:
        listing = obstore.list_with_delimiter(_store(location), prefix)
    except obe.BaseError as exc:
        raise _one_line(location, exc) from None
    return sorted(str(p).rstrip("/").rsplit("/", 1)[-1] for p in listing["common_prefixes"])


def delete_prefix(location: Location) -> int:
    """Remove everything under ``location`` (a folder: a scratch folder, a table a killed first publish left);
    the number of objects removed (locally: the folder, 1 when it was there)."""
    if not is_object_store(location):
        import shutil

        there = Path(location).exists()
        shutil.rmtree(Path(location), ignore_errors=True)
        return int(there)
    import obstore
    from obstore import exceptions as obe

    names = [name for name, _ in list_prefix(location)]
    store = _store(location)
    try:
        for start in range(0, len(names), 1000):  # S3's DeleteObjects takes at most 1000 keys
            obstore.delete(store, [f"{location.key}/{n}" if location.key else n for n in names[start:start + 1000]])
    except obe.BaseError as exc:
        raise _one_line(location, exc) from None
    return len(names)


def copy_object(source: LakeLocation, target: LakeLocation) -> None:
    """A server-side copy of one object within the bucket (no byte passes through this process)."""
    import obstore
    from obstore import exceptions as obe

    if source.bucket != target.bucket:
        raise StorageError(f"{source} -> {target}: a server-side copy stays within one bucket")
    try:
        obstore.copy(_store(source), source.key, target.key)
    except obe.BaseError as exc:
        raise _one_line(source, exc) from None


#: The operations by name, for a caller that takes a store as a parameter (tests run them over both kinds).
OPERATIONS: Mapping[str, Callable[..., Any]] = {
    "read_object": read_object, "put_if_absent": put_if_absent, "replace_if_match": replace_if_match,
    "delete_object": delete_object, "list_prefix": list_prefix, "put_object": put_object,
    "list_folders": list_folders, "delete_prefix": delete_prefix,
}

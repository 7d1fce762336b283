"""The lake's store on S3 or an S3-compatible server (:class:`S3Store`, one bucket): the
:class:`~clwl.lake.stores.Store` operations through obstore, the Rust ``object_store`` crate deltalake itself uses,
so the two agree on settings and answers. Conditions are the server's: ``If-None-Match: *`` to create, ``If-Match:
<etag>`` to replace (412 otherwise, raised as StorageConflict); an obstore error is one line naming the location
(:func:`one_line`). Settings from the environment only (clwl.lake.s3_env)."""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from clwl.lake.lake_files import MAX_METADATA_BYTES, StorageConflict, StorageError
from clwl.lake.s3_env import ENV_ACCESS_KEY, ENV_ENDPOINT, ENV_SECRET_KEY, S3Settings, s3_settings
from clwl.lake.stores import Store, StoredObject


@functools.lru_cache(maxsize=16)
def _s3_client(bucket: str, settings: S3Settings) -> Any:
    from obstore.store import S3Store as ObstoreS3

    config: dict[str, Any] = {"region": settings.region, "virtual_hosted_style_request": settings.virtual_hosted}
    if settings.endpoint:
        config["endpoint"] = settings.endpoint.rstrip("/")
    if settings.access_key:
        config.update(access_key_id=settings.access_key, secret_access_key=settings.secret_key)
        if settings.session_token:
            config["session_token"] = settings.session_token
    # A few retries within seconds: a lake command facing a store that is down says so, it does not wait minutes.
    return ObstoreS3(bucket, config=config,
                     client_options={"allow_http": settings.allow_http, "connect_timeout": "5s", "timeout": "60s"},
                     retry_config={"max_retries": 2, "retry_timeout": dt.timedelta(seconds=20)})


#: How S3 says a request was refused for its credentials or the policy, when the client reports a generic error.
_DENIED = re.compile(r"status code: 40[13]\b|<Code>(AccessDenied|SignatureDoesNotMatch|InvalidAccessKeyId|"
                     r"InvalidToken|ExpiredToken|AllAccessDisabled)</Code>")


def no_bucket(location: Any) -> StorageError:
    """The one line for a lake whose bucket is not on the store (the lake never creates a bucket)."""
    return StorageError(f"{location}: bucket {location.bucket} does not exist (the lake never creates buckets: "
                        f"create it, or check the name and {ENV_ENDPOINT})")


def one_line(location: Any, exc: BaseException) -> StorageError:
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


def _no_conditional(location: Any) -> StorageError:
    return StorageError(f"{location}: the object store does not support conditional writes (If-None-Match / "
                        f"If-Match), which the lake's pointer and lock need")


def _conditional_error(location: Any, exc: BaseException) -> StorageError:
    """A conditional put's failure: a server that does not implement the condition says 501 NotImplemented."""
    if re.search(r"status code: 501|NotImplemented", str(exc)):
        return _no_conditional(location)
    return one_line(location, exc)


_checked_buckets: set[str] = set()
_checked_stores: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class S3Store(Store):
    """One bucket of an S3-compatible store. The client is made from the environment's settings at each call
    (clwl.lake.s3_env; cached per bucket and settings), so a changed environment is a new client."""

    bucket: str
    atomic_conditions = True

    def _client(self) -> Any:
        return _s3_client(self.bucket, s3_settings())

    def _key(self, location: Any) -> str:
        if location.bucket != self.bucket:
            raise StorageError(f"{location}: not in the bucket {self.bucket} of this store")
        return location.key

    def _prefix(self, location: Any) -> str:
        key = self._key(location)
        return f"{key}/" if key else ""

    def get(self, location, limit=MAX_METADATA_BYTES):
        import obstore
        from obstore import exceptions as obe

        try:
            got = obstore.get(self._client(), self._key(location))
            size = int(got.meta["size"])
            if size > limit:
                raise StorageError(f"{location} is {size} bytes, more than the {limit} a lake metadata object may "
                                   f"have: the lake is damaged")
            return StoredObject(bytes(got.bytes()), str(got.meta["e_tag"]))
        except (FileNotFoundError, obe.NotFoundError):
            raise FileNotFoundError(str(location)) from None
        except obe.BaseError as exc:
            raise one_line(location, exc) from None

    def put(self, location, data):
        self._put(location, data)

    def _put(self, location: Any, data: Any) -> None:
        import obstore
        from obstore import exceptions as obe

        try:
            obstore.put(self._client(), self._key(location), data)
        except obe.BaseError as exc:
            raise one_line(location, exc) from None

    def put_if_absent(self, location, data):
        from obstore import exceptions as obe

        return self._conditional_put(location, data, "create", (obe.AlreadyExistsError, obe.PreconditionError),
                                     "exists already (created by another writer)")

    def put_if_match(self, location, data, etag):
        from obstore import exceptions as obe

        return self._conditional_put(location, data, {"e_tag": etag},
                                     (obe.PreconditionError, obe.NotFoundError, FileNotFoundError),
                                     "was replaced by another writer since it was read")

    def _conditional_put(self, location, data, mode, lost: tuple[type[BaseException], ...], lost_words: str) -> str:
        """One put with a condition (``mode``: obstore's "create" or {"e_tag": ...}); the exceptions in ``lost``
        mean another writer won the race (StorageConflict); a store without conditions says so."""
        import obstore
        from obstore import exceptions as obe

        try:
            return str(obstore.put(self._client(), self._key(location), data, mode=mode)["e_tag"])
        except lost:
            raise StorageConflict(f"{location} {lost_words}") from None
        except obe.NotSupportedError:
            raise _no_conditional(location) from None
        except obe.BaseError as exc:
            raise _conditional_error(location, exc) from None

    def replace(self, location, data, etag):
        if etag is None:
            self.put_if_absent(location, data)
        else:
            self.put_if_match(location, data, etag)

    def put_file(self, location, source):
        self._put(location, Path(source))  # obstore streams a path (a multipart upload when large)

    def get_file(self, location, target):
        import obstore
        from obstore import exceptions as obe

        try:
            with open(target, "wb") as fh:
                for chunk in obstore.get(self._client(), self._key(location)).stream():
                    fh.write(chunk)
        except obe.BaseError as exc:
            raise one_line(location, exc) from None

    def copy(self, source, target):
        import obstore
        from obstore import exceptions as obe

        if source.bucket != target.bucket:
            raise StorageError(f"{source} -> {target}: a server-side copy stays within one bucket")
        try:
            obstore.copy(self._client(), self._key(source), self._key(target))
        except obe.BaseError as exc:
            raise one_line(source, exc) from None
        return None

    def delete(self, location):
        import obstore
        from obstore import exceptions as obe

        try:
            obstore.delete(self._client(), self._key(location))
        except (obe.NotFoundError, FileNotFoundError):
            pass
        except obe.BaseError as exc:
            raise one_line(location, exc) from None

    def list(self, location):
        import obstore
        from obstore import exceptions as obe

        prefix = self._prefix(location)
        try:
            return sorted((str(m["path"])[len(prefix):], int(m["size"]))
                          for batch in obstore.list(self._client(), prefix or None) for m in batch)
        except obe.BaseError as exc:
            raise one_line(location, exc) from None

    def list_folders(self, location):
        import obstore
        from obstore import exceptions as obe

        try:
            listing = obstore.list_with_delimiter(self._client(), self._prefix(location) or None)
        except obe.BaseError as exc:
            raise one_line(location, exc) from None
        return sorted(str(p).rstrip("/").rsplit("/", 1)[-1] for p in listing["common_prefixes"])

    def exists(self, location):
        import obstore
        from obstore import exceptions as obe

        try:
            listing: Iterator = iter(obstore.list(self._client(), self._prefix(location) or None, chunk_size=1))
            return any(len(batch) for batch in listing)
        except obe.BaseError as exc:
            raise one_line(location, exc) from None

    def is_folder(self, location):
        return self.exists(location)

    def delete_prefix(self, location):
        import obstore
        from obstore import exceptions as obe

        names = [name for name, _ in self.list(location)]
        key = self._key(location)
        try:
            for start in range(0, len(names), 1000):  # S3's DeleteObjects takes at most 1000 keys
                obstore.delete(self._client(), [f"{key}/{n}" if key else n for n in names[start:start + 1000]])
        except obe.BaseError as exc:
            raise one_line(location, exc) from None
        return len(names)

    def remove_if_empty(self, location):
        return None

    def folder_time(self, location):
        return None

    def temporaries(self, folder):
        return []

    def absolute(self, location, *, resolve=False):
        return location

    def uri(self, location):
        return str(location)

    def storage_options(self, env=None):
        s = s3_settings(env)
        opts = {"AWS_REGION": s.region, "AWS_ALLOW_HTTP": str(s.allow_http).lower(),
                "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": str(s.virtual_hosted).lower()}
        for name, value in (("AWS_ENDPOINT_URL", s.endpoint), ("AWS_ACCESS_KEY_ID", s.access_key),
                            ("AWS_SECRET_ACCESS_KEY", s.secret_key), ("AWS_SESSION_TOKEN", s.session_token)):
            if value:
                opts[name] = value
        return opts

    def arrow_filesystem(self, location, env: Mapping[str, str] | None = None):
        import pyarrow.fs as pafs

        s = s3_settings(env)
        kwargs: dict[str, Any] = {"region": s.region, "force_virtual_addressing": s.virtual_hosted}
        if s.access_key:
            kwargs.update(access_key=s.access_key, secret_key=s.secret_key, session_token=s.session_token)
        if s.endpoint:
            scheme, _, host = s.endpoint.partition("://")
            kwargs.update(endpoint_override=host.rstrip("/"), scheme=scheme)
        return pafs.SubTreeFileSystem(f"{self.bucket}/{self._key(location)}".rstrip("/"), pafs.S3FileSystem(**kwargs))

    def check_writable(self, root):
        self.storage_options()  # credentials and endpoint: one line before anything is sent
        self.check_conditional_writes(root)

    def check_bucket(self, root: Any) -> None:
        """Refuse (StorageError, one line: ``bucket X does not exist``, access denied, ...) a lake whose bucket is
        not there, before anything is written: some S3-compatible servers create a bucket on the first put into
        it, and the lake must never do that. One list request of at most one key; once per bucket and process."""
        if self.bucket in _checked_buckets:
            return
        import obstore
        from obstore import exceptions as obe

        try:
            listing: Iterator = iter(obstore.list(self._client(), self._prefix(root) or None, chunk_size=1))
            next(listing, None)
        except obe.BaseError as exc:
            raise one_line(root, exc) from None
        except FileNotFoundError as exc:  # obstore's NotFound for a missing bucket
            raise one_line(root, exc) from None
        _checked_buckets.add(self.bucket)

    def check_conditional_writes(self, root: Any) -> None:
        """Refuse (StorageError, one line) a store that ignores ``If-None-Match``: a second conditional create of
        the probe object ``<root>/_conditional_probe`` must be refused. Once per bucket and process, before the
        first lease is taken (a store that silently overwrote would let two writers both believe they hold the
        lake)."""
        key = (self.bucket, root.key)
        if key in _checked_stores:
            return
        self.check_bucket(root)  # before the probe's put: a server that makes buckets on the fly must not
        probe = root / "_conditional_probe"
        self._put(probe, b"probe\n")
        try:
            self.put_if_absent(probe, b"second\n")
        except StorageConflict:
            _checked_stores.add(key)
            return
        raise _no_conditional(root)

"""The object store's settings, from the environment only: credentials, endpoint, region, addressing style and
plain-HTTP permission (:func:`s3_settings`), never from a file of the repository or an argument a log would print.
:data:`ENV_VARIABLES` lists every variable read; docs/object-storage.md says what each does. clwl.lake.storage gives
these settings to deltalake, pyarrow and its own object operations, and spark.session to S3A."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Mapping

from clwl.lake.lake_files import StorageError

ENV_ACCESS_KEY = "AWS_ACCESS_KEY_ID"
ENV_SECRET_KEY = "AWS_SECRET_ACCESS_KEY"
ENV_SESSION_TOKEN = "AWS_SESSION_TOKEN"
ENV_REGION = "AWS_REGION"
ENV_ENDPOINT = "AWS_ENDPOINT_URL"
#: ``true``: an ``http://`` endpoint is allowed (an S3-compatible server on a trusted network or the loopback).
ENV_ALLOW_HTTP = "AWS_ALLOW_HTTP"
#: ``true``: bucket.host addressing (AWS's default style); unset or ``false``: path style (host/bucket/key), what
#: S3-compatible servers expect.
ENV_VIRTUAL_HOSTED = "AWS_VIRTUAL_HOSTED_STYLE_REQUEST"
#: Credentials from a web identity token (Kubernetes IRSA) or a container's credentials endpoint (ECS).
ENV_WEB_IDENTITY = ("AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN")
ENV_CONTAINER = ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")
#: ``true``: take credentials from the instance metadata service (an EC2 instance profile). Off unless asked:
#: without credentials in the environment a lake command says so in one line instead of calling out to a
#: metadata address that a machine off the cloud does not have.
ENV_INSTANCE_CREDENTIALS = "CLWL_S3_INSTANCE_CREDENTIALS"

#: Every variable read (docs/object-storage.md, "Variables").
ENV_VARIABLES = (ENV_ACCESS_KEY, ENV_SECRET_KEY, ENV_SESSION_TOKEN, ENV_REGION, ENV_ENDPOINT, ENV_ALLOW_HTTP,
                 ENV_VIRTUAL_HOSTED, *ENV_WEB_IDENTITY, *ENV_CONTAINER, ENV_INSTANCE_CREDENTIALS)

DEFAULT_REGION = "us-east-1"


def env_flag(name: str, env: Mapping[str, str]) -> bool | None:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return None
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise StorageError(f"{name}={env.get(name)!r}: expected true or false")


@dataclass(frozen=True)
class S3Settings:
    """What the environment says about the object store (:func:`s3_settings`). ``repr`` hides the secrets."""

    region: str
    endpoint: str | None
    allow_http: bool
    virtual_hosted: bool
    access_key: str | None = None
    secret_key: str | None = None
    session_token: str | None = None

    def __repr__(self) -> str:
        key = "set" if self.access_key else "from the provider chain"
        return (f"S3Settings(region={self.region!r}, endpoint={self.endpoint!r}, allow_http={self.allow_http}, "
                f"virtual_hosted={self.virtual_hosted}, credentials={key})")


def s3_settings(env: Mapping[str, str] | None = None) -> S3Settings:
    """The object store's settings from ``env`` (default ``os.environ``). StorageError, one line naming the
    variable, for missing or half-given credentials, an endpoint that is not a URL, or an ``http://`` endpoint
    without ``AWS_ALLOW_HTTP=true``."""
    env = os.environ if env is None else env
    key, secret = env.get(ENV_ACCESS_KEY, "").strip(), env.get(ENV_SECRET_KEY, "").strip()
    if bool(key) != bool(secret):
        missing = ENV_SECRET_KEY if key else ENV_ACCESS_KEY
        raise StorageError(f"no S3 credentials: {missing} is not set ({ENV_ACCESS_KEY} and {ENV_SECRET_KEY} "
                           f"go together)")
    chain = (all(env.get(v) for v in ENV_WEB_IDENTITY) or any(env.get(v) for v in ENV_CONTAINER)
             or env_flag(ENV_INSTANCE_CREDENTIALS, env))
    if not key and not chain:
        raise StorageError(f"no S3 credentials: set {ENV_ACCESS_KEY} and {ENV_SECRET_KEY} (or a web identity, a "
                           f"container credentials endpoint, or {ENV_INSTANCE_CREDENTIALS}=true for an instance "
                           f"profile)")
    endpoint = env.get(ENV_ENDPOINT, "").strip() or None
    allow_http = bool(env_flag(ENV_ALLOW_HTTP, env))
    if endpoint is not None:
        if not re.fullmatch(r"https?://[^/\s]+/?", endpoint):
            raise StorageError(f"{ENV_ENDPOINT}={endpoint!r}: not an endpoint URL (http(s)://host[:port])")
        if endpoint.startswith("http://") and not allow_http:
            raise StorageError(f"{ENV_ENDPOINT}={endpoint!r} is plain HTTP: set {ENV_ALLOW_HTTP}=true to allow it")
    return S3Settings(region=env.get(ENV_REGION, "").strip() or env.get("AWS_DEFAULT_REGION", "").strip()
                      or DEFAULT_REGION, endpoint=endpoint, allow_http=allow_http,
                      virtual_hosted=bool(env_flag(ENV_VIRTUAL_HOSTED, env)), access_key=key or None,
                      secret_key=secret or None, session_token=env.get(ENV_SESSION_TOKEN, "").strip() or None)

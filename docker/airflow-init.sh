#!/usr/bin/env bash
# The airflow-init service of docker-compose.yml: one-shot set-up before the other Airflow services start.
# Runs as root through the image's /entrypoint (which has already waited for the metadata database), and is
# idempotent, so it runs on every `docker compose up`:
#   1. migrate the metadata database;
#   2. set the admin user's password for the SimpleAuthManager (user:role come from
#      AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS, the password from AIRFLOW_ADMIN_PASSWORD: both from .env);
#   3. hand the shared folders (logs, auth, and the lake's when it is a local folder) to AIRFLOW_UID:0, the user
#      every Airflow and Spark container runs as. The default lake is on the object store (CLWL_LAKE=s3://...):
#      it has no folder here, and the store made its bucket when it started.
set -euo pipefail

: "${AIRFLOW_UID:?AIRFLOW_UID is not set}"
: "${AIRFLOW_ADMIN_USERNAME:?set AIRFLOW_ADMIN_USERNAME in .env}"
: "${AIRFLOW_ADMIN_PASSWORD:?set AIRFLOW_ADMIN_PASSWORD in .env}"
: "${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE:?not set by docker-compose.yml}"
: "${CLWL_LAKE:?not set by docker-compose.yml}"

case ",${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS:-}," in
    *",${AIRFLOW_ADMIN_USERNAME}:admin,"*) ;;
    *) echo "airflow-init: ${AIRFLOW_ADMIN_USERNAME} is not an admin in AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS" >&2
       exit 1 ;;
esac

echo "airflow-init: Airflow $(airflow version)"
airflow db migrate

auth_dir="$(dirname "${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE}")"
# A local lake is an absolute folder (a volume an override file mounts); anything else is a URI (s3://...), which
# must never become a local folder named "s3:".
local_lake=""
case "${CLWL_LAKE}" in
    /*) local_lake="${CLWL_LAKE}" ;;
esac
mkdir -p /opt/airflow/logs "${auth_dir}" ${local_lake:+"${local_lake}"}

python - <<'PY'
import json
import os

path = os.environ["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"]
try:
    with open(path) as f:
        passwords = json.load(f)
except (FileNotFoundError, json.JSONDecodeError):
    passwords = {}
passwords[os.environ["AIRFLOW_ADMIN_USERNAME"]] = os.environ["AIRFLOW_ADMIN_PASSWORD"]
tmp = path + ".tmp"
with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
    json.dump(passwords, f)
os.replace(tmp, path)
PY

# Only the top folders: the lake may be large, and what is inside was written by AIRFLOW_UID already.
chown "${AIRFLOW_UID}:0" /opt/airflow/logs "${auth_dir}" "${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE}" \
    ${local_lake:+"${local_lake}"}
chmod g+rwx /opt/airflow/logs ${local_lake:+"${local_lake}"}
chmod 700 "${auth_dir}"
echo "airflow-init: done (admin user ${AIRFLOW_ADMIN_USERNAME}, lake ${CLWL_LAKE})"

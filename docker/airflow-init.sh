#!/usr/bin/env bash
# The airflow-init service of docker-compose.yml: one-shot set-up before the other Airflow services start.
# Runs as root through the image's /entrypoint (which has already waited for the metadata database), and is
# idempotent, so it runs on every `docker compose up`:
#   1. migrate the metadata database;
#   2. set the admin user's password for the SimpleAuthManager (user:role come from
#      AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS, the password from AIRFLOW_ADMIN_PASSWORD: both from .env);
#   3. hand the shared folders (lake volume, logs, auth) to AIRFLOW_UID:0, the user every Airflow and Spark
#      container runs as.
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
mkdir -p "${CLWL_LAKE}" /opt/airflow/logs "${auth_dir}"

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
chown "${AIRFLOW_UID}:0" "${CLWL_LAKE}" /opt/airflow/logs "${auth_dir}" "${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE}"
chmod g+rwx "${CLWL_LAKE}" /opt/airflow/logs
chmod 700 "${auth_dir}"
echo "airflow-init: done (admin user ${AIRFLOW_ADMIN_USERNAME}, lake ${CLWL_LAKE})"

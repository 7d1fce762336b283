#!/usr/bin/env bash
# Resolve the Delta Lake jars at image BUILD time, so no container ever downloads them at run time.
#
#   bake-delta-jars.sh <group:artifact:version> <dest-dir>
#
# Uses Spark's own Ivy resolution (spark-submit --packages), with the same exclusions as the project's
# session factory (spark.session.PROVIDED_BY_PYSPARK: jars Spark already ships, in other versions), then
# copies the resolved jars into <dest-dir>. The containers point CLWL_DELTA_JARS at <dest-dir>.
# Needs: java on PATH, and `python` with this project (and so pyspark + delta-spark) installed.
# An extra Maven repository (a mirror of Maven Central) can be given as CLWL_MAVEN_REPO.
set -euo pipefail

coordinate="${1:?usage: bake-delta-jars.sh <group:artifact:version> <dest-dir>}"
dest="${2:?usage: bake-delta-jars.sh <group:artifact:version> <dest-dir>}"
py="$(command -v python)"

# The coordinate must be the one the installed pyspark + delta-spark pair needs (what get_spark would
# otherwise resolve with Ivy): a stale build argument fails the build, not the first nightly run.
"$py" -c '
import sys
from spark.session import delta_packages
want = delta_packages()
if sys.argv[1] != want:
    sys.exit(f"bake-delta-jars: asked for {sys.argv[1]} but pyspark + delta-spark installed here need {want}")
' "$coordinate"

# A Spark runtime beside pyspark (the apache/spark image's SPARK_HOME) must be the same version.
"$py" -c '
import os, sys, pyspark
release = os.path.join(os.environ.get("SPARK_HOME", ""), "RELEASE")
if os.path.isfile(release):
    first = open(release).readline().split()
    if len(first) < 2 or first[1] != pyspark.__version__:
        sys.exit(f"bake-delta-jars: SPARK_HOME has {first!r}, pyspark is {pyspark.__version__}")
'

excludes="$("$py" -c 'from spark.session import PROVIDED_BY_PYSPARK as p; print(",".join(p))')"
spark_submit="$("$py" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit"))')"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf 'pass\n' >"$work/noop.py"   # nothing to run: spark-submit resolves --packages before it starts the app

args=(--master 'local[1]' --packages "$coordinate" --exclude-packages "$excludes"
      --conf "spark.jars.ivy=$work/ivy" --conf spark.ui.enabled=false)
if [[ -n "${CLWL_MAVEN_REPO:-}" ]]; then
    args+=(--repositories "$CLWL_MAVEN_REPO")
fi
PYSPARK_PYTHON="$py" PYSPARK_DRIVER_PYTHON="$py" "$spark_submit" "${args[@]}" "$work/noop.py"

mkdir -p "$dest"
cp "$work"/ivy/jars/*.jar "$dest"/

# Ivy names a retrieved jar <group>_<artifact>-<version>.jar: the requested one must be among them.
IFS=: read -r group artifact version <<<"$coordinate"
main_jar="$dest/${group}_${artifact}-${version}.jar"
if [[ ! -s "$main_jar" ]]; then
    echo "bake-delta-jars: $main_jar is missing after resolution" >&2
    exit 1
fi
echo "bake-delta-jars: $(ls "$dest" | wc -l) jars in $dest:"
ls -1 "$dest"

#!/bin/sh
# clwl-capture-rest.sh: configuration and channel status captures through the MQ REST API (mqweb), for queue
# managers the capture host cannot reach with runmqsc. capture/README.md says when to run it.
#
#   clwl-capture-rest.sh config   QMGR   -> <landing>/<YYYY-MM-DD>/<QMGR>/config_HHMMSS.json
#   clwl-capture-rest.sh chstatus QMGR   -> <landing>/<YYYY-MM-DD>/<QMGR>/chstatus_HHMMSS.json
#
# Each DISPLAY is one POST of a runCommandJSON request to /ibmmq/rest/<version>/admin/action/qmgr/<QMGR>/mqsc;
# the answers are written as {"qmgr": "<QMGR>", "response": [<answer>, ...]}, the wrapped form the ingest reads
# (docs/formats.md, "REST captures"): the ingest checks that "qmgr" is the folder's queue manager.
#
# Settings (environment):
#   CLWL_LANDING        required: the landing folder (or a staging folder with the same layout)
#   CLWL_MQWEB_URL      required: https://host:port of the mqweb server (no path)
#   CLWL_REST_VERSION   v2 (default), v1 before MQ 9.1.5, v3 from MQ 9.3
#   CLWL_NETRC          netrc file with the mqweb user and password (default $HOME/.netrc; chmod 600), e.g.
#                         machine mqweb.example.com login clwlmon password ...
#   CLWL_CURL_OPTS      more curl options, e.g. "--cacert /etc/clwl/mqweb-ca.pem" or, for a client
#                       certificate instead of a password, "--cert /etc/clwl/clwl.pem --key /etc/clwl/clwl.key"
#   CLWL_CAPTURE_LOG    log file (default $HOME/clwl-capture.log)
# No user name or password is ever written in this script, its log or its command line (curl reads them from
# the netrc file).  Exit status: 0 written, 1 a request failed, 2 bad usage or settings.

set -u
umask 027

PROG=clwl-capture-rest.sh
LOG=${CLWL_CAPTURE_LOG:-${HOME:-/tmp}/clwl-capture.log}

usage() {
    echo "usage: $PROG config|chstatus QMGR   (CLWL_LANDING, CLWL_MQWEB_URL set)" >&2
    exit 2
}
log() { printf '%s %s rest %s: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$QM" "$SUB" "$*" >>"$LOG"; }
fail() { log "FAILED: $*"; echo "$PROG: $*" >&2; exit 1; }

[ $# -eq 2 ] || usage
SUB=$1
QM=$2
case $SUB in config|chstatus) ;; *) usage ;; esac
case $QM in ''|*[!A-Za-z0-9._%]*) echo "$PROG: not a queue manager name: '$QM'" >&2; exit 2 ;; esac
[ -n "${CLWL_LANDING:-}" ] || { echo "$PROG: set CLWL_LANDING to the landing folder" >&2; exit 2; }
[ -n "${CLWL_MQWEB_URL:-}" ] || { echo "$PROG: set CLWL_MQWEB_URL (https://host:port)" >&2; exit 2; }
if ! : >>"$LOG" 2>/dev/null; then
    echo "$PROG: cannot write the log $LOG (set CLWL_CAPTURE_LOG)" >&2
    exit 2
fi
NETRC=${CLWL_NETRC:-${HOME:-}/.netrc}
VERSION=${CLWL_REST_VERSION:-v2}
# A "." in a queue manager name must be sent as %2E in the URL (IBM's REST API documentation); "%" as %25.
QM_URL=$(printf '%s' "$QM" | sed -e 's/%/%25/g' -e 's/\./%2E/g')
URL=${CLWL_MQWEB_URL%/}/ibmmq/rest/$VERSION/admin/action/qmgr/$QM_URL/mqsc

STAMP=$(date -u +%Y-%m-%dT%H%M%S)
DAY=${STAMP%T*}
HMS=${STAMP#*T}
DIR=$CLWL_LANDING/$DAY/$QM
mkdir -p "$DIR" || fail "cannot create $DIR"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/clwl-capture.XXXXXX") || fail "cannot create a temporary folder"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 1' HUP INT TERM

# post N QUALIFIER [NAME]: DISPLAY <QUALIFIER>[(NAME)] ALL as runCommandJSON; the answer in $WORK/N.json.
post() {
    if [ $# -eq 3 ]; then
        body='{"type":"runCommandJSON","command":"display","qualifier":"'$2'","name":"'$3'","responseParameters":["all"]}'
    else
        body='{"type":"runCommandJSON","command":"display","qualifier":"'$2'","responseParameters":["all"]}'
    fi
    log "curl -X POST $URL -d '$body'"
    # The csrf header is required on POST by mqweb (any value). -sS: no progress meter, but errors.
    # shellcheck disable=SC2086  # CLWL_CURL_OPTS is a list of options
    code=$(curl -sS ${CLWL_CURL_OPTS:-} --netrc-file "$NETRC" -X POST \
        -H 'Content-Type: application/json' -H 'ibm-mq-rest-csrf-token: clwl' \
        --data "$body" -o "$WORK/$1.json" -w '%{http_code}' "$URL" 2>"$WORK/$1.err") \
        || fail "curl failed (exit status $?): $(head -c 300 "$WORK/$1.err")"
    # runCommandJSON answers 200 also when a DISPLAY found nothing (its overallCompletionCode says so, and the
    # ingest reads that as "none"); anything else (401, 403, 404 queue manager unknown, 503) is not a capture.
    [ "$code" = 200 ] || fail "HTTP $code from $URL: $(head -c 300 "$WORK/$1.json")"
    grep -q '"commandResponse"' "$WORK/$1.json" || fail "no commandResponse in the answer to $2"
}

# The same DISPLAY commands as the runmqsc capture (capture/unix/clwl-capture.sh).
if [ "$SUB" = config ]; then
    post 1 qmgr
    post 2 clusqmgr '*'
    post 3 qcluster '*'
    post 4 qlocal '*'
    post 5 qalias '*'
    post 6 qremote '*'
    post 7 namelist '*'
    n=7
else
    post 1 chstatus '*'
    n=1
fi

out=$WORK/capture.json
printf '{"qmgr": "%s", "response": [\n' "$QM" >"$out"
i=1
while [ "$i" -le "$n" ]; do
    cat "$WORK/$i.json" >>"$out"
    [ "$i" -lt "$n" ] && printf ',\n' >>"$out"
    i=$((i + 1))
done
printf '\n]}\n' >>"$out"

name=${SUB}_$HMS.json
final=$DIR/$name
[ -e "$final" ] && fail "$final exists already; not overwritten"
cp "$out" "$DIR/.$name.part" && mv "$DIR/.$name.part" "$final" || fail "cannot write $final"
log "wrote $final ($(wc -c <"$final" | tr -d ' ') bytes)"

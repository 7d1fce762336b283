#!/bin/sh
# clwl-capture.sh: fill the clwl landing folder from one queue manager (capture/README.md says what runs when).
#
#   clwl-capture.sh config     QMGR   DISPLAY QMGR/CLUSQMGR/QCLUSTER/QLOCAL/QALIAS/QREMOTE/NAMELIST -> config_HHMMSS.mqsc
#   clwl-capture.sh chstatus   QMGR   DISPLAY CHSTATUS(*) ALL                   -> chstatus_HHMMSS.mqsc
#   clwl-capture.sh accounting QMGR   amqsmon queue accounting and statistics   -> accounting_HHMMSS.amqsmon,
#                                                                                statistics_HHMMSS.amqsmon
#   clwl-capture.sh trace      QMGR   amqsact -v of the activity trace queue    -> QMGR.YYYY-MM-DD.HHMMSS.amqsact
#   clwl-capture.sh xmitq      QMGR   a browse of every cluster transmit queue  -> xmitq_HHMMSS.dmpmqmsg (.amqsbcg)
#
# Every file goes to $CLWL_LANDING/<YYYY-MM-DD>/<QMGR>/<name>, date and HHMMSS in UTC (docs/landing.md): it is
# written under a hidden name (.name.part, which the ingest never reads) and renamed when complete. Each command
# run is written to the log first ($CLWL_CAPTURE_LOG). No credentials: runmqsc and the samples connect in
# bindings mode as the user running this script (a member of mqm, or with the setmqaut rights in README.md).
#
# Settings (environment):
#   CLWL_LANDING            required: the landing folder (or a staging folder with the same layout)
#   CLWL_CAPTURE_LOG        log file (default $HOME/clwl-capture.log); never inside the landing folder
#   CLWL_XMITQ_TOOL         dmpmqmsg (default) or amqsbcg
#   CLWL_AMQSMON_TYPES      "accounting statistics" (default); either word alone to capture one
#   CLWL_AMQSMON_BROWSE     1: amqsmon -b (leave the records on the queue; see README.md before using it)
#   CLWL_TRACE_QUEUE        queue amqsact reads (default SYSTEM.ADMIN.TRACE.ACTIVITY.QUEUE)
#   CLWL_TRACE_BROWSE       1: amqsact -b (leave the trace messages on the queue)
#   CLWL_TRACE_WAIT         amqsact -w seconds (default 5)
# Exit status: 0 done (also when there was nothing to capture), 1 a command failed, 2 bad usage or settings.

set -u
umask 027  # browses hold message data: readable by the owner and the group only

# IBM MQ's default places, after the caller's PATH (so that a PATH set by the caller wins).
PATH="$PATH:/opt/mqm/bin:/opt/mqm/samp/bin"
export PATH

PROG=clwl-capture.sh
LOG=${CLWL_CAPTURE_LOG:-${HOME:-/tmp}/clwl-capture.log}

usage() {
    echo "usage: $PROG config|chstatus|accounting|trace|xmitq QMGR   (CLWL_LANDING=<landing folder>)" >&2
    exit 2
}

log() {
    # one line per event: UTC time, queue manager, subcommand, text
    printf '%s %s %s: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$QM" "$SUB" "$*" >>"$LOG"
}

fail() {
    log "FAILED: $*"
    echo "$PROG: $*" >&2
    exit 1
}

[ $# -eq 2 ] || usage
SUB=$1
QM=$2
case $SUB in config|chstatus|accounting|trace|xmitq) ;; *) usage ;; esac
# An MQ name, without "/" (the name is a folder of the landing layout).
case $QM in ''|*[!A-Za-z0-9._%]*) echo "$PROG: not a queue manager name: '$QM'" >&2; exit 2 ;; esac
[ ${#QM} -le 48 ] || { echo "$PROG: queue manager name longer than 48 characters" >&2; exit 2; }
[ -n "${CLWL_LANDING:-}" ] || { echo "$PROG: set CLWL_LANDING to the landing folder" >&2; exit 2; }
if ! : >>"$LOG" 2>/dev/null; then
    echo "$PROG: cannot write the log $LOG (set CLWL_CAPTURE_LOG)" >&2
    exit 2
fi

# One clock reading for the whole run, so that the date folder and HHMMSS agree even across midnight.
STAMP=$(date -u +%Y-%m-%dT%H%M%S)
DAY=${STAMP%T*}
HMS=${STAMP#*T}
DIR=$CLWL_LANDING/$DAY/$QM
mkdir -p "$DIR" || fail "cannot create $DIR"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/clwl-capture.XXXXXX") || fail "cannot create a temporary folder"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 1' HUP INT TERM

# publish TMPFILE NAME: move a complete file into the landing folder under its final name. The file is first
# copied next to its final place under a hidden name (the ingest ignores names starting with "."), so the rename
# is atomic and a reader never sees half a file.
publish() {
    final=$DIR/$2
    [ -e "$final" ] && fail "$final exists already (two runs in the same second?); not overwritten"
    part=$DIR/.$2.part
    cp "$1" "$part" || fail "cannot write $part"
    mv "$part" "$final" || fail "cannot rename $part to $final"
    log "wrote $final ($(wc -c <"$final" | tr -d ' ') bytes)"
}

# mqsc NAME: run the MQSC commands of $WORK/NAME.in with runmqsc; output in $WORK/NAME.out. runmqsc is run
# without -e so that it echoes each command: the ingest reads the echoed DISPLAY commands to know which kinds a
# capture lists in full. Its exit status 10 (some command failed, e.g. "object not found" for an empty
# DISPLAY QALIAS(*)) still gives a usable capture; 20 (nothing run: queue manager not available) does not.
mqsc() {
    log "runmqsc $QM < $1.mqsc:$(sed 's/^/ | /' "$WORK/$1.in" | tr '\n' ' ')"
    runmqsc "$QM" <"$WORK/$1.in" >"$WORK/$1.out" 2>&1
    rc=$?
    case $rc in
        0) ;;
        10) log "runmqsc exit status 10: some commands did not complete (kept: 'not found' answers are normal)" ;;
        *) log "runmqsc output: $(head -c 600 "$WORK/$1.out" | tr '\n' ' ')"
           fail "runmqsc $QM ended with exit status $rc" ;;
    esac
    grep -q 'AMQ[0-9][0-9][0-9][0-9]' "$WORK/$1.out" || fail "runmqsc $QM printed no AMQ message"
}

# The configuration a replay needs (docs/formats.md): the queue manager's cluster attributes, the cluster
# queue managers and cluster queues it knows, its local, alias and remote queues, and the namelists that
# CLUSNL names. Each with (*) and no WHERE, so that an object missing from a later capture is known to be gone.
config() {
    cat >"$WORK/config.in" <<'MQSC'
DISPLAY QMGR ALL
DISPLAY CLUSQMGR(*) ALL
DISPLAY QCLUSTER(*) ALL
DISPLAY QLOCAL(*) ALL
DISPLAY QALIAS(*) ALL
DISPLAY QREMOTE(*) ALL
DISPLAY NAMELIST(*) ALL
MQSC
    mqsc config
    publish "$WORK/config.out" "config_$HMS.mqsc"
}

chstatus() {
    echo 'DISPLAY CHSTATUS(*) ALL' >"$WORK/chstatus.in"
    mqsc chstatus
    publish "$WORK/chstatus.out" "chstatus_$HMS.mqsc"
}

# amqsmon reads its queue destructively unless -b: each record is then captured exactly once. Output without a
# "MonitoringType:" line means the queue was empty: no file (an empty amqsmon file would be rejected).
accounting() {
    browse=
    [ "${CLWL_AMQSMON_BROWSE:-0}" = 1 ] && browse=-b
    for type in ${CLWL_AMQSMON_TYPES:-accounting statistics}; do
        case $type in accounting|statistics) ;; *) fail "CLWL_AMQSMON_TYPES: unknown type '$type'" ;; esac
        log "amqsmon -m $QM -t $type $browse > $type.amqsmon"
        # shellcheck disable=SC2086  # $browse is empty or one word
        amqsmon -m "$QM" -t "$type" $browse >"$WORK/$type.out" 2>"$WORK/$type.err" \
            || fail "amqsmon -t $type ended with exit status $?: $(head -c 300 "$WORK/$type.err")"
        if grep -q '^MonitoringType:' "$WORK/$type.out"; then
            publish "$WORK/$type.out" "${type}_$HMS.amqsmon"
        else
            log "no $type records on the queue: nothing written"
        fi
    done
}

# depth QUEUE: CURDEPTH of a local queue, from runmqsc.
depth() {
    echo "DISPLAY QLOCAL($1) CURDEPTH" >"$WORK/depth.in"
    mqsc depth
    sed -n 's/.*CURDEPTH( *\([0-9][0-9]*\) *).*/\1/p' "$WORK/depth.out" | head -n 1
}

# amqsact prints the trace messages there are now (-d: the depth read just before, so that a busy trace queue
# cannot keep it running for ever; -w: wait at most that long for one). Name: QMGR.YYYY-MM-DD.HHMMSS.amqsact, so
# that name order is time order (the ingest hands open handles from one trace file of a day to the next in name
# order).
trace() {
    queue=${CLWL_TRACE_QUEUE:-SYSTEM.ADMIN.TRACE.ACTIVITY.QUEUE}
    n=$(depth "$queue")
    [ -n "$n" ] || fail "no CURDEPTH for $queue in the runmqsc answer"
    if [ "$n" -eq 0 ]; then
        log "$queue is empty: nothing written"
        return 0
    fi
    browse=
    [ "${CLWL_TRACE_BROWSE:-0}" = 1 ] && browse=-b
    log "amqsact -m $QM -q $queue -v -d $n -w ${CLWL_TRACE_WAIT:-5} $browse > trace.amqsact"
    # shellcheck disable=SC2086
    amqsact -m "$QM" -q "$queue" -v -d "$n" -w "${CLWL_TRACE_WAIT:-5}" $browse >"$WORK/trace.out" 2>"$WORK/trace.err" \
        || fail "amqsact ended with exit status $?: $(head -c 300 "$WORK/trace.err")"
    if grep -q '^MonitoringType: MQI Activity Trace' "$WORK/trace.out"; then
        publish "$WORK/trace.out" "$QM.$DAY.$HMS.amqsact"
    else
        log "amqsact printed no trace message: nothing written"
    fi
}

# The cluster transmission queues: SYSTEM.CLUSTER.TRANSMIT.QUEUE, the SYSTEM.CLUSTER.TRANSMIT.<channel> queues
# of DEFCLXQ(CHANNEL), and any queue with CLCHNAME set. All of them are browsed into one file (the readers take
# the queue of each message from the dump's own queue line), so that one capture time holds them all.
xmitq_list() {
    echo 'DISPLAY QLOCAL(*) WHERE(USAGE EQ XMITQ) CLCHNAME' >"$WORK/xmitqs.in"
    mqsc xmitqs
    awk '
        function flush() {
            if (q != "" && (q ~ /^SYSTEM\.CLUSTER\.TRANSMIT\./ || c != "")) print q
            q = ""; c = ""
        }
        /^ *AMQ[0-9][0-9][0-9][0-9]/ { flush(); next }
        {
            line = $0
            while (match(line, /[A-Z]+\([^)]*\)/)) {
                tok = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
                key = substr(tok, 1, index(tok, "(") - 1)
                val = substr(tok, index(tok, "(") + 1); sub(/\)$/, "", val); gsub(/^ +| +$/, "", val)
                if (key == "QUEUE") q = val; else if (key == "CLCHNAME") c = val
            }
        }
        END { flush() }' "$WORK/xmitqs.out"
}

xmitq() {
    tool=${CLWL_XMITQ_TOOL:-dmpmqmsg}
    case $tool in dmpmqmsg|amqsbcg) ;; *) fail "CLWL_XMITQ_TOOL: '$tool' is neither dmpmqmsg nor amqsbcg" ;; esac
    xmitq_list >"$WORK/queues" || exit 1
    if [ ! -s "$WORK/queues" ]; then
        log "no cluster transmission queue: nothing written"
        return 0
    fi
    : >"$WORK/xmitq.out"
    i=0
    while IFS= read -r queue; do
        i=$((i + 1))
        if [ "$tool" = dmpmqmsg ]; then
            # -i browses (-I would remove the messages); no -d: the data as hex X lines.
            log "dmpmqmsg -m $QM -i $queue -f $i.dmp"
            dmpmqmsg -m "$QM" -i "$queue" -f "$WORK/$i.dmp" >"$WORK/$i.err" 2>&1 \
                || fail "dmpmqmsg -i $queue ended with exit status $?: $(head -c 300 "$WORK/$i.err")"
        else
            log "amqsbcg $queue $QM > $i.dmp"
            amqsbcg "$queue" "$QM" >"$WORK/$i.dmp" 2>"$WORK/$i.err" \
                || fail "amqsbcg $queue ended with exit status $?: $(head -c 300 "$WORK/$i.err")"
        fi
        cat "$WORK/$i.dmp" >>"$WORK/xmitq.out"
    done <"$WORK/queues"
    publish "$WORK/xmitq.out" "xmitq_$HMS.$tool"
}

log "start (landing $DIR)"
"$SUB"
log "done"

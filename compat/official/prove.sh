#!/usr/bin/env bash
# Proves the Java scenario set against an official Apache RocketMQ broker:
# start official server -> run.sh all -> restart phases around a server stop/start -> stop. Prints timings.
#
#   compat/official/prove.sh [SERVER_VERSION=4.9.8] [CLIENT_VERSION=4.9.8]
# Env: NSPORT (default 23876), BROKERPORT (default 24911; also uses BROKERPORT-2 and BROKERPORT+1), KEEP_STORE=1
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OFFICIAL="$HERE/official.sh"
RUN="$HERE/../java/run.sh"
SV="${1:-4.9.8}"
CV="${2:-4.9.8}"
NSPORT="${NSPORT:-23876}"
BPORT="${BROKERPORT:-24911}"
STORE=$(mktemp -d "${TMPDIR:-/tmp}/rmq-official-$SV.XXXXXX")
STATE="$STORE/restart-state.properties"
NS="127.0.0.1:$NSPORT"

cleanup() {
  "$OFFICIAL" stop "$STORE" >/dev/null 2>&1 || true
  if [ -z "${KEEP_STORE:-}" ]; then rm -rf "$STORE"; else echo "store kept in $STORE"; fi
}
trap cleanup EXIT

t() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1fs", b-a}'; }
fail=0

"$OFFICIAL" fetch "$SV" >/dev/null || exit 2
T0=$(t)
"$OFFICIAL" start "$SV" "$STORE" "$NSPORT" "$BPORT" || exit 2
T1=$(t)
"$RUN" all -Dnamesrv="$NS" -Drocketmq.version="$CV" || fail=1
T2=$(t)
"$RUN" restart -Dnamesrv="$NS" -Drocketmq.version="$CV" -Dphase=produce -DstateFile="$STATE" || fail=1
T3=$(t)
"$OFFICIAL" stop "$STORE" >/dev/null
"$OFFICIAL" start "$SV" "$STORE" "$NSPORT" "$BPORT" || exit 2
T4=$(t)
"$RUN" restart -Dnamesrv="$NS" -Drocketmq.version="$CV" -Dphase=consume -DstateFile="$STATE" || fail=1
T5=$(t)
"$OFFICIAL" stop "$STORE" >/dev/null
T6=$(t)

echo "== official server $SV ($(cat "$STORE/official.version" 2>/dev/null)), client $CV"
echo "   start $(dt "$T0" "$T1") | run.sh all $(dt "$T1" "$T2") | restart produce $(dt "$T2" "$T3")" \
     "| stop+start $(dt "$T3" "$T4") | restart consume $(dt "$T4" "$T5") | stop $(dt "$T5" "$T6")" \
     "| total $(dt "$T0" "$T6")"
[ $fail -eq 0 ] && echo "== ALL PASSED" || echo "== FAILURES (see above)"
exit $fail

#!/usr/bin/env bash
# Captures real frames between the stock Java client and an official RocketMQ namesrv/broker and extracts
# protocol/vectors/*.json from them.
#
#   compat/capture/capture-official.sh [SERVER_VERSION=4.9.8] [CLIENT_VERSION=4.9.8]
#
# Layout (all 127.0.0.1):  broker --REGISTER_BROKER--> :21877 (proxy "nsb") --> namesrv :21876
#                          client --route etc--------> :21878 (proxy "nsc") --> namesrv :21876
#                          client --send/pull/...----> :22921 (proxy "broker") --> broker :22911
# The "nsc" proxy rewrites "127.0.0.1:22911" to "127.0.0.1:22921" in namesrv responses so the client's route points
# at the broker proxy; the capture and the extracted vectors keep the bytes the namesrv really sent.
# Env: CAPTURE_SCENARIOS (run.sh filter; default below), FRAMES (jsonl path to keep), VECTORS_DIR.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SV="${1:-4.9.8}"
CV="${2:-4.9.8}"
NS=21876; NSB=21877; NSC=21878; BP=22911; BPX=22921
SCEN="${CAPTURE_SCENARIOS:-unicodeTagsKeysPropertiesRoundTrip,batch32ThenConsumeAll}"
VECTORS_DIR="${VECTORS_DIR:-$ROOT/protocol/vectors}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rmq-capture.XXXXXX")
FRAMES="${FRAMES:-$WORK/frames.jsonl}"
PROXY_PID=""

cleanup() {
  "$ROOT/compat/official/official.sh" stop "$WORK/store" >/dev/null 2>&1 || true
  if [ -n "$PROXY_PID" ] && kill -0 "$PROXY_PID" 2>/dev/null; then kill -TERM "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null; fi
}
trap cleanup EXIT

node "$HERE/capture-proxy.mjs" --out "$FRAMES" \
  --map "nsb=127.0.0.1:$NSB>127.0.0.1:$NS" \
  --map "nsc=127.0.0.1:$NSC>127.0.0.1:$NS" \
  --map "broker=127.0.0.1:$BPX>127.0.0.1:$BP" \
  --rewrite "nsc:127.0.0.1:$BP=127.0.0.1:$BPX" > "$WORK/proxy.out" 2>&1 &
PROXY_PID=$!
for _ in $(seq 50); do grep -q ready "$WORK/proxy.out" && break; sleep 0.1; done
grep -q ready "$WORK/proxy.out" || { cat "$WORK/proxy.out"; exit 2; }

OFFICIAL_BROKER_NAMESRV="127.0.0.1:$NSB" "$ROOT/compat/official/official.sh" start "$SV" "$WORK/store" "$NS" "$BP" || exit 2
RV=$(cat "$WORK/store/official.version")
"$ROOT/compat/java/run.sh" "$SCEN" -Dnamesrv="127.0.0.1:$NSC" -Drocketmq.version="$CV" || echo "capture: scenarios failed (frames kept anyway)"
"$ROOT/compat/official/official.sh" stop "$WORK/store" >/dev/null
kill -TERM "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null; PROXY_PID=""

echo "capture: $(wc -l < "$FRAMES") frames in $FRAMES"
SERVER_DESC="official Apache RocketMQ $RV namesrv+broker"
[ "$RV" = 4.9.8 ] && SERVER_DESC="$SERVER_DESC (Maven Central lacks broker/namesrv 4.9.8: their 4.9.7 module jars with 4.9.8 common/remoting/store)"
SRC="captured $(date -u +%Y-%m-%d) with compat/capture/capture-proxy.mjs (compat/capture/capture-official.sh): stock Java rocketmq-client $CV (JDK 17, scenarios $SCEN) and $SERVER_DESC started by compat/official/official.sh, all on 127.0.0.1, JSON serialization"
node "$HERE/extract-vectors.mjs" "$FRAMES" "$VECTORS_DIR" "$SRC"

#!/usr/bin/env bash
# Run stock-RocketMQ-Java-client scenarios against a nameserver, one JVM per invocation (no Maven at run time).
#
#   compat/java/run.sh [FILTER] -Dnamesrv=127.0.0.1:9876 [-Dkey=value ...]
#
# FILTER (comma-separated list allowed):
#   all (default)            every scenario except the restart phases (tag "restart") and the store-move
#                            phases (tag "storecompat", run by compat/store-compat.mjs), the differential probe
#                            (tag "diff") and autoCreateTopicEnable=false scenarios (tag "noAutoCreate"), both run by
#                            compat/runner.mjs on extra servers; tag "acl" (AclTest) needs an ACL-enabled broker
#   ClassName                e.g. SendConsumeTest
#   ClassName#method         e.g. SendConsumeTest#tagFilterAorC
#   method                   e.g. tagFilterAorC (class found by name)
#   tag:TAG                  e.g. tag:restart (with -Dphase=produce|consume -DstateFile=F)
#   restart                  = tag:restart
#   list                     print the scenario names and exit
# Useful properties: -Dnamesrv=H:P (required) -DrunId=X -DscenarioWaitMs=60000 -DquietMs=2000
#   -Drocketmq.version=5.3.3 (client version; builds once per version) -Dphase=produce|consume -DstateFile=F
# Env: JAVA_OPTS (extra JVM flags), KEEP_LOGS=1 (keep client logs even on success), RUN_TIMEOUT (s, default 900),
#   VERBOSE=1 (keep the ConsoleLauncher's own failure report and stack traces).
# Exit code: 0 all passed, 1 some failed, 2 usage/no tests/build error.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FILTER="${1:-all}"
[ $# -gt 0 ] && shift
case "$FILTER" in -D*) set -- "$FILTER" "$@"; FILTER=all ;; esac

PROPS=()
VERSION=4.9.8
for a in "$@"; do
  case "$a" in
    -Drocketmq.version=*) VERSION="${a#-Drocketmq.version=}" ;;
    -D*) PROPS+=("$a") ;;
    *) echo "run.sh: unexpected argument '$a' (only -Dkey=value after the filter)" >&2; exit 2 ;;
  esac
done

BUILD="$HERE/target/rmq-$VERSION"
STAMP="$BUILD/.built"
mkdir -p "$HERE/target"

build() {
  local newest
  newest=$(find "$HERE/src" "$HERE/pom.xml" -type f -newer "$STAMP" 2>/dev/null | head -1 || true)
  if [ -f "$STAMP" ] && [ -z "$newest" ] && [ -f "$BUILD/classpath.txt" ]; then return 0; fi
  echo "run.sh: building scenarios against rocketmq-client $VERSION ..." >&2
  local t0=$SECONDS
  (cd "$HERE" && "$HERE/../lib/mvn-locked" -q -B -Dstyle.color=never -Drocketmq.version="$VERSION" -DskipTests package \
      dependency:build-classpath -Dmdep.outputFile="$BUILD/classpath.txt" -Dmdep.includeScope=test) >&2 \
    || { echo "run.sh: maven build failed" >&2; return 2; }
  touch "$STAMP"
  echo "run.sh: build took $((SECONDS - t0))s" >&2
}

# serialize concurrent first builds
exec 9>"$HERE/target/.build.lock"
flock 9
build || exit 2
flock -u 9

CLASSES="$BUILD/test-classes"
CP="$CLASSES:$BUILD/classes:$(cat "$BUILD/classpath.txt")"
SRC="$HERE/src/test/java/compat/scenarios"

if [ "$FILTER" = list ]; then
  for f in "$SRC"/*Test.java; do
    c=$(basename "$f" .java)
    tag=""; grep -q '@Tag("restart")' "$f" && tag="   [restart: needs -Dphase=produce|consume -DstateFile=F]"
    grep -q '@Tag("storecompat")' "$f" && tag="   [storecompat: compat/store-compat.mjs runs it, -Dphase=produce|consume -DstateFile=F]"
    grep -q '@Tag("diff")' "$f" && tag="   [diff: needs -DdiffOut=F; compat/runner.mjs compares ours with official]"
    grep -q '@Tag("noAutoCreate")' "$f" && tag="   [noAutoCreate: needs a broker with autoCreateTopicEnable=false]"
    grep -q '@Tag("acl")' "$f" && tag="   [acl: needs a broker with aclEnable=true and compat/acl/plain_acl.yml]"
    grep -q '@Tag("acl2")' "$f" && tag="   [acl2: needs a 5.x broker with authenticationEnabled/authorizationEnabled; compat/acl2-official.mjs sets it up]"
    grep -q '@Tag("consumerStart")' "$f" && tag="   [consumerStart: test/integration/consumer-start-java.test.ts runs it against ours]"
    grep -q '@Tag("subscriptionRefresh")' "$f" && tag="   [subscriptionRefresh: test/integration/subscription-refresh-java.test.ts runs it against ours]"
    # only @Test methods: a scenario class may have helper methods with the same shape
    awk -v c="$c" -v tag="$tag" '/@Test/ {t=1; next} t && match($0, /void [a-zA-Z0-9]+\(\)/) {m=substr($0, RSTART+5, RLENGTH-7); print c "#" m tag; t=0; next} /^[[:space:]]*(public|private|protected|void|static)/ {t=0}' "$f"
  done
  exit 0
fi

SEL=()
IFS=',' read -r -a parts <<< "$FILTER"
for f in "${parts[@]}"; do
  case "$f" in
    all|"") SEL+=(--scan-classpath "$CLASSES" --exclude-tag restart --exclude-tag storecompat --exclude-tag diff --exclude-tag noAutoCreate --exclude-tag acl --exclude-tag acl2 --exclude-tag consumerStart --exclude-tag subscriptionRefresh) ;;
    restart) SEL+=(--scan-classpath "$CLASSES" --include-tag restart) ;;
    tag:*) SEL+=(--scan-classpath "$CLASSES" --include-tag "${f#tag:}") ;;
    *#*)
      cls="${f%%#*}"; [[ "$cls" == *.* ]] || cls="compat.scenarios.$cls"
      SEL+=(--select-method "$cls#${f#*#}") ;;
    [A-Z]*)
      [ -f "$SRC/$f.java" ] || { echo "run.sh: no scenario class $f" >&2; exit 2; }
      SEL+=(--select-class "compat.scenarios.$f") ;;
    *)
      file=$(grep -l -E "^\s+void $f\(\)" "$SRC"/*.java | head -1 || true)
      [ -n "$file" ] || { echo "run.sh: no scenario method $f (try: run.sh list)" >&2; exit 2; }
      cls=$(basename "$file" .java)
      SEL+=(--select-method "compat.scenarios.$cls#$f") ;;
  esac
done

# Output filter: drop the ConsoleLauncher's failure report (SummaryListener already printed one line per failure),
# keep its "[ N tests ... ]" counters, and repeat our "scenarios: N passed, N failed" line as the closing line.
FILTER_AWK='
  /^$/ { next }
  /^Failures \(/ { state = 1; next }
  /^Test run finished after/ { state = 2; next }
  state == 0 { print; fflush(); if ($0 ~ /^scenarios: /) last = $0; next }
  state == 2 && /tests (found|successful|failed|skipped|aborted)/ { print; fflush() }
  END { if (state == 2 && last != "") print last }'

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rmq-compat-java.XXXXXX")
mkdir -p "$WORK/home" "$WORK/logs"
set +e
# shellcheck disable=SC2086
timeout -k 10 "${RUN_TIMEOUT:-900}" java -Xms64m -Xmx768m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto \
  -Djava.net.preferIPv4Stack=true -Dfile.encoding=UTF-8 \
  -Duser.home="$WORK/home" -Drocketmq.client.logRoot="$WORK/logs" -Drocketmq.log.root="$WORK/logs" \
  -Drocketmq.client.logUseSlf4j=false -Drocketmq.client.localOffsetStoreDir="$WORK/home/.rocketmq_offsets" \
  ${JAVA_OPTS:-} "${PROPS[@]}" \
  -cp "$CP" org.junit.platform.console.ConsoleLauncher execute \
  --disable-banner --disable-ansi-colors --details=none --fail-if-no-tests "${SEL[@]}" \
  | if [ -n "${VERBOSE:-}" ]; then cat; else awk "$FILTER_AWK"; fi
rc=${PIPESTATUS[0]}
set -e

if [ $rc -eq 0 ] && [ -z "${KEEP_LOGS:-}" ]; then
  rm -rf "$WORK"
else
  echo "run.sh: client logs in $WORK/logs" >&2
fi
case $rc in
  0) exit 0 ;;
  1) exit 1 ;;
  124|137) echo "run.sh: killed after ${RUN_TIMEOUT:-900}s" >&2; exit 1 ;;
  *) exit "$rc" ;;
esac

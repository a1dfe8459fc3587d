#!/usr/bin/env bash
# Builds the fault-script client once per rocketmq-client version: target/rmq-V/jclient.jar + classpath.txt
# (dependency jars in ~/.m2). Prints the full classpath on stdout. Rebuilds only when src/ or pom.xml changed.
#   compat/jclient/build.sh [VERSION]     (default 4.9.8)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VERSION="${1:-4.9.8}"
T="$HERE/target/rmq-$VERSION"
STAMP="$T/.built"
mkdir -p "$T"
exec 9>"$T/.build.lock"
flock 9
newest=$(find "$HERE/src" "$HERE/pom.xml" -type f -newer "$STAMP" 2>/dev/null | head -1 || true)
if [ ! -f "$STAMP" ] || [ -n "$newest" ] || [ ! -f "$T/classpath.txt" ] || [ ! -f "$T/jclient.jar" ]; then
  echo "compat/jclient/build.sh: building the client (rocketmq-client $VERSION) ..." >&2
  (cd "$HERE" && "$HERE/../lib/mvn-locked" -q -B -Dstyle.color=never -Drocketmq.version="$VERSION" package dependency:build-classpath \
      -Dmdep.outputFile="$T/classpath.txt" -Dmdep.includeScope=runtime) > "$T/build.log" 2>&1 \
    || { tail -30 "$T/build.log" >&2; echo "compat/jclient/build.sh: maven build failed (see $T/build.log)" >&2; exit 2; }
  touch "$STAMP"
fi
echo "$T/jclient.jar:$(cat "$T/classpath.txt")"

#!/usr/bin/env bash
# Builds the bench load driver once: target/bench-driver.jar + target/classpath.txt (dependency jars in ~/.m2).
# Prints the full classpath on stdout. Rebuilds only when src/ or pom.xml changed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
T="$HERE/target"
STAMP="$T/.built"
mkdir -p "$T"
exec 9>"$T/.build.lock"
flock 9
newest=$(find "$HERE/src" "$HERE/pom.xml" -type f -newer "$STAMP" 2>/dev/null | head -1 || true)
if [ ! -f "$STAMP" ] || [ -n "$newest" ] || [ ! -f "$T/classpath.txt" ] || [ ! -f "$T/bench-driver.jar" ]; then
  echo "compat/bench/build.sh: building the load driver (rocketmq-client 4.9.8) ..." >&2
  (cd "$HERE" && mvn -q -B -Dstyle.color=never package dependency:build-classpath \
      -Dmdep.outputFile="$T/classpath.txt" -Dmdep.includeScope=runtime) > "$T/build.log" 2>&1 \
    || { tail -30 "$T/build.log" >&2; echo "compat/bench/build.sh: maven build failed (see $T/build.log)" >&2; exit 2; }
  touch "$STAMP"
fi
echo "$T/bench-driver.jar:$(cat "$T/classpath.txt")"

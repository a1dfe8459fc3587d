#!/usr/bin/env bash
# One rocketmq-client-java 5.x scenario (Scenario.java) against a gRPC endpoint.
#   compat/grpc5/java/run.sh VERSION SCENARIO ENDPOINT TOPIC GROUP
# The client jar (shaded, no other dependencies) is resolved with Maven into compat/.cache/grpc5-java-VERSION/lib
# and Scenario.java compiled there once per version. Client logs go to that directory, not to ~/logs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -eq 5 ] || { echo "usage: run.sh VERSION SCENARIO ENDPOINT TOPIC GROUP" >&2; exit 2; }
V=$1
D="$HERE/../../.cache/grpc5-java-$V"
if [ ! -f "$D/.built" ] || [ "$HERE/Scenario.java" -nt "$D/.built" ]; then
  mkdir -p "$D"
  cat > "$D/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.compat</groupId><artifactId>grpc5-java-client</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-client-java</artifactId><version>$V</version></dependency>
  </dependencies>
</project>
POM
  rm -rf "$D/lib" "$D/classes"
  "$HERE/../../lib/mvn-locked" -q -B -Dstyle.color=never -f "$D/pom.xml" dependency:copy-dependencies -DoutputDirectory="$D/lib" > "$D/mvn.log" 2>&1 \
    || { grep -m1 ERROR "$D/mvn.log" >&2; echo "RESULT FAIL maven could not resolve rocketmq-client-java $V"; exit 1; }
  mkdir -p "$D/classes"
  javac -nowarn -d "$D/classes" -cp "$D/lib/*" "$HERE/Scenario.java" > "$D/javac.log" 2>&1 \
    || { cat "$D/javac.log" >&2; echo "RESULT FAIL Scenario.java does not compile against $V"; exit 1; }
  touch "$D/.built"
fi
mkdir -p "$D/logs"
exec java -Xmx256m -Drocketmq.log.root="$D/logs" -Dmq.consoleAppender.enabled=false -cp "$D/lib/*:$D/classes" Scenario "$2" "$3" "$4" "$5"

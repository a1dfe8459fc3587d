#!/usr/bin/env bash
# Stock Apache RocketMQ `mqadmin` (org.apache.rocketmq:rocketmq-tools) as a plain `java` process.
#
#   compat/mqadmin/run.sh SUBCOMMAND [ARGS...]        e.g. compat/mqadmin/run.sh topicList -n 127.0.0.1:9876
#   compat/mqadmin/run.sh --fetch                     only resolve the jars (prints the lib directory)
#   compat/mqadmin/run.sh --consumer NAMESRV GROUP TOPIC[,TOPIC...]
#                                                     a stock Java push consumer (TestConsumer.java, same client
#                                                     version) for the tests; stops on stdin EOF or `quit`
#
# Env: MQADMIN_VERSION (default 4.9.8; 5.3.3 works too), MQADMIN_KEEP_TMP=1 (keep the temp home with the
#      tools/client logs and print its path), MQADMIN_JAVA_OPTS (extra JVM flags), MQADMIN_FAST_EXIT=0 (see below),
#      MQADMIN_CDS=0 (no class-data-sharing archive; see below), MQADMIN_ACCESS_KEY / MQADMIN_SECRET_KEY (ACL
#      credentials, written to the temp home's conf/tools.yml, which mqadmin reads).
# Fast exit: mqadmin's Netty client shuts down gracefully (2 s quiet period per event loop group), which keeps the
# JVM alive ~3 s after the command has printed everything. By default a 10-line launcher (compiled once into the
# cache) calls MQAdminStartup.main(args) unchanged and then exits the JVM; MQADMIN_FAST_EXIT=0 runs
# MQAdminStartup directly. startMonitoring (which keeps running after main returns) always runs directly.
# Jars go to compat/.cache/mqadmin-<version>/lib (gitignored), resolved once with Maven from a generated pom.
# Nothing is written to ~ (user.home, ROCKETMQ_HOME and the client log root point into a temp dir) except ~/.m2.
# `rocketmq.namesrv.addr` is not set here: pass -n (mqadmin sets it from -n), or NAMESRV_ADDR yourself.
# The exit code is mqadmin's, and mqadmin exits 0 after most failures (it prints the exception): check output.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="$(cd "$HERE/.." && pwd)/.cache"
VERSION="${MQADMIN_VERSION:-4.9.8}"
DIR="$CACHE/mqadmin-$VERSION"
LIB="$DIR/lib"

die() { echo "mqadmin/run.sh: $*" >&2; exit 2; }
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "MQADMIN_VERSION must be an exact version like 4.9.8 (got '$VERSION')"

gen_pom() {
  cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.compat</groupId>
  <artifactId>mqadmin-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-tools</artifactId><version>$VERSION</version></dependency>
  </dependencies>
</project>
EOF
}

fetch() {
  [ -f "$LIB/.complete" ] && return 0
  mkdir -p "$DIR"
  # Concurrent first runs (parallel tests) resolve once.
  exec 9>"$DIR/.lock"
  flock 9
  if [ ! -f "$LIB/.complete" ]; then
    echo "mqadmin/run.sh: resolving rocketmq-tools $VERSION with maven ..." >&2
    gen_pom > "$DIR/pom.xml"
    rm -rf "$LIB.tmp"
    if ! "$HERE/../lib/mvn-locked" -q -B -Dstyle.color=never -f "$DIR/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$LIB.tmp" > "$DIR/mvn.log" 2>&1; then
      grep -m3 ERROR "$DIR/mvn.log" | cut -c1-400 >&2 || true
      rm -rf "$LIB.tmp"
      die "maven could not resolve rocketmq-tools $VERSION (see $DIR/mvn.log)"
    fi
    [ -f "$LIB.tmp/rocketmq-tools-$VERSION.jar" ] || die "rocketmq-tools-$VERSION.jar missing after resolution"
    rm -rf "$LIB"; mv "$LIB.tmp" "$LIB"
    touch "$LIB/.complete"
    echo "mqadmin/run.sh: $(ls "$LIB" | grep -c '\.jar$') jars in $LIB" >&2
  fi
  flock -u 9
  exec 9>&-
}

# MQAdminStartup.main, then flush and exit (skipping the Netty quiet period). Reflection keeps it version-free.
# A jar, not a class directory: the class-data-sharing archive below only covers jar classpaths.
build_launcher() {
  [ -f "$DIR/launcher.jar" ] && return 0
  exec 9>"$DIR/.lock"
  flock 9
  if [ ! -f "$DIR/launcher.jar" ]; then
    rm -rf "$DIR/launcher.build"; mkdir -p "$DIR/launcher.build"
    cat > "$DIR/launcher.build/MQAdminFastExit.java" <<'JAVA'
public final class MQAdminFastExit {
  public static void main(String[] args) throws Throwable {
    Class.forName("org.apache.rocketmq.tools.command.MQAdminStartup")
        .getMethod("main", String[].class).invoke(null, (Object) args);
    System.out.flush();
    System.err.flush();
    Runtime.getRuntime().halt(0);
  }
}
JAVA
    javac -d "$DIR/launcher.build" "$DIR/launcher.build/MQAdminFastExit.java" >&2 || die "javac failed"
    jar cf "$DIR/launcher.jar.tmp" -C "$DIR/launcher.build" MQAdminFastExit.class || die "jar failed"
    mv "$DIR/launcher.jar.tmp" "$DIR/launcher.jar"
    rm -rf "$DIR/launcher.build"
  fi
  flock -u 9
  exec 9>&-
}

# TestConsumer.java compiled against this version's client jars (again whenever the source changes).
build_consumer() {
  local src="$HERE/TestConsumer.java" out="$DIR/consumer"
  [ -f "$out/TestConsumer.class" ] && [ "$out/TestConsumer.class" -nt "$src" ] && return 0
  exec 9>"$DIR/.lock"
  flock 9
  if ! { [ -f "$out/TestConsumer.class" ] && [ "$out/TestConsumer.class" -nt "$src" ]; }; then
    rm -rf "$out.tmp"
    javac -nowarn -cp "$LIB/*" -d "$out.tmp" "$src" >&2 || die "javac TestConsumer.java failed"
    rm -rf "$out"; mv "$out.tmp" "$out"
  fi
  flock -u 9
  exec 9>&-
}

if [ "${1:-}" = "--fetch" ]; then fetch; echo "$LIB"; exit 0; fi
fetch
MAIN=org.apache.rocketmq.tools.command.MQAdminStartup
CP="$LIB/*"
CDS=()
# Full version of the JDK `java` runs (from its release file; empty if unknown), e.g. 17.0.15.
JDK_VERSION="$(sed -n 's/^JAVA_VERSION="\(.*\)"$/\1/p' "$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")/release" 2>/dev/null || true)"
JSA="$DIR/mqadmin-jdk$JDK_VERSION.jsa"
if [ "${1:-}" = "--consumer" ]; then
  shift
  build_consumer
  MAIN=TestConsumer
  CP="$DIR/consumer:$CP"
elif [ "${MQADMIN_FAST_EXIT:-1}" != 0 ] && [ "${1:-}" != startMonitoring ]; then
  build_launcher
  MAIN=MQAdminFastExit
  # Explicit, sorted jar list: a class-data-sharing archive is only valid for the exact classpath it was made with.
  CP="$DIR/launcher.jar$(printf ':%s' "$LIB"/*.jar)"
  # Class-data sharing (JDK 13+): the first run records the classes it loads, later runs map them (~1/3 less
  # start-up CPU). A stale or mismatched archive is ignored by the JVM (quietly: CDS logging is off). MQADMIN_CDS=0 disables it.
  if [ "${MQADMIN_CDS:-1}" != 0 ] && [ "${JDK_VERSION%%.*}" -ge 13 ] 2>/dev/null; then
    # (recorded from a real command, not `help`, so that the client and Netty classes are in it)
    if [ -f "$JSA" ]; then
      CDS=(-XX:SharedArchiveFile="$JSA" -Xlog:cds=off -Xlog:cds+dynamic=off)
    elif [ $# -gt 1 ] && [ "$1" != help ]; then
      CDS=(-XX:ArchiveClassesAtExit="$JSA.$$" -Xlog:cds=off -Xlog:cds+dynamic=off)
    fi
  fi
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/mqadmin-XXXXXX")"
if [ -n "${MQADMIN_KEEP_TMP:-}" ]; then
  echo "mqadmin/run.sh: logs in $TMP" >&2
else
  trap 'rm -rf "$TMP"' EXIT
fi
mkdir -p "$TMP/conf" "$TMP/logs"
# MQAdminStartup configures logback from $ROCKETMQ_HOME/conf/logback_tools.xml and skips the command when it
# is missing; the tools' own log goes to a file so stdout holds only the command's output.
cat > "$TMP/conf/logback_tools.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>$TMP/logs/tools.log</file>
    <encoder><pattern>%d{HH:mm:ss.SSS} %p %t %logger{0} - %m%n</pattern><charset>UTF-8</charset></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
EOF

# ACL: mqadmin (4.9.x and 5.x) signs its requests with the accessKey/secretKey of $ROCKETMQ_HOME/conf/tools.yml.
if [ -n "${MQADMIN_ACCESS_KEY:-}" ]; then
  printf 'accessKey: %s\nsecretKey: %s\n' "$MQADMIN_ACCESS_KEY" "${MQADMIN_SECRET_KEY:-}" > "$TMP/conf/tools.yml"
fi

# A short-lived CLI: small heap, C1 only, no shared perf file.
JAVA_OPTS=(-Xms32m -Xmx192m -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+PerfDisableSharedMem
  -XX:-OmitStackTraceInFastThrow -Djava.net.preferIPv4Stack=true -Dfile.encoding=UTF-8
  -Duser.home="$TMP" -Drocketmq.home.dir="$TMP"
  -Drocketmq.client.logRoot="$TMP/logs" -Drocketmq.client.logLevel=WARN -Dlogback.configurationFile="$TMP/conf/logback_tools.xml")
# shellcheck disable=SC2206
[ -n "${MQADMIN_JAVA_OPTS:-}" ] && JAVA_OPTS+=(${MQADMIN_JAVA_OPTS})

rc=0
ROCKETMQ_HOME="$TMP" java "${JAVA_OPTS[@]}" ${CDS[@]+"${CDS[@]}"} -cp "$CP" "$MAIN" "$@" || rc=$?
if [ -f "$JSA.$$" ]; then mv -f "$JSA.$$" "$JSA"; fi
exit $rc

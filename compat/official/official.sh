#!/usr/bin/env bash
# Official Apache RocketMQ reference servers (nameserver + broker) as plain `java` processes.
#
#   official.sh fetch [VERSION]                          # default 4.9.8; "5.3.x" / "5.3" = newest 5.3.x on Maven Central
#   official.sh start VERSION STOREDIR NSPORT BROKERPORT # prints "ready ns=127.0.0.1:NSPORT broker=127.0.0.1:BROKERPORT"
#   official.sh stop STOREDIR
#   official.sh kill STOREDIR                            # SIGKILL the broker (a crash; the nameserver stays up)
#   official.sh version VERSION                          # print the resolved concrete version
#   official.sh proxy-start VERSION DIR NAMESRV GRPCPORT REMOTINGPORT
#                                                        # rocketmq-proxy (5.x) in cluster mode in front of any
#                                                        # namesrv + broker (ours too); prints "ready proxy grpc=… remoting=…"
#   official.sh proxy-stop DIR
#   official.sh proxy-fetch VERSION                      # resolve the proxy jars only
#
# Jars go to compat/.cache/official-<version>/lib (gitignored); nothing is written to ~ except ~/.m2.
# Ports used by the broker: BROKERPORT, BROKERPORT-2 (VIP/"fast" channel) and BROKERPORT+1 (HA). Prefer ports
# below 32768 (outside Linux's ephemeral range) so client sockets cannot hold them.
# Env: OFFICIAL_START_TIMEOUT (s, default 180), OFFICIAL_STOP_TIMEOUT (s before KILL, default 30),
#   OFFICIAL_BROKER_NAMESRV (namesrvAddr the broker registers with; default 127.0.0.1:NSPORT - e.g. a capture proxy;
#   readiness is then checked against its first address), OFFICIAL_NO_NAMESRV=1 (start no nameserver: the broker
#   registers with OFFICIAL_BROKER_NAMESRV, e.g. a slave joining another server's group; NSPORT is not used),
#   OFFICIAL_BROKER_EXTRA (extra broker.properties lines, newline-separated), OFFICIAL_REFRESH=1 (re-resolve X.Y.x).
#   OFFICIAL_PROXY_EXTRA (extra rmq-proxy.json members, e.g. '"enableBatchAck":true').
# The proxy's jars (rocketmq-proxy and its runtime dependencies) go to compat/.cache/official-<version>/proxy-lib.
# Proxy ports bind 0.0.0.0 (no bind option in 5.3.3): use ports below 32768 and dial 127.0.0.1.
#   OFFICIAL_ACL_FILE (copied to the broker's conf/plain_acl.yml; with OFFICIAL_BROKER_EXTRA=aclEnable=true).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
COMPAT="$(cd "$HERE/.." && pwd)"
CACHE="$COMPAT/.cache"
DEFAULT_VERSION=4.9.8
START_TIMEOUT=${OFFICIAL_START_TIMEOUT:-180}
STOP_TIMEOUT=${OFFICIAL_STOP_TIMEOUT:-30}

die() { echo "official.sh: $*" >&2; exit 1; }
log() { echo "official.sh: $*" >&2; }

# ---------------------------------------------------------------- version resolution
is_exact() { [[ "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; }

version_prefix() { # "5.3.x" | "5.3" -> 5.3
  local prefix="${1%.x}"; prefix="${prefix%.}"
  [[ "$prefix" =~ ^[0-9]+\.[0-9]+$ ]] || die "bad version '$1' (use e.g. 4.9.8, 5.3.x)"
  echo "$prefix"
}

newest_cached() { # $1 prefix
  ls -d "$CACHE"/official-"$1".*/lib/.complete 2>/dev/null \
    | sed -E 's#.*/official-([0-9.]+)/lib/.complete#\1#' | sort -V | tail -1 || true
}

# Candidate concrete versions for a prefix, newest first: versions that Maven Central lists for both
# rocketmq-broker and rocketmq-namesrv (read from the metadata Maven caches in the local repository
# after resolving a version range).
candidates() { # $1 prefix
  local prefix=$1 major="${1%%.*}" minor="${1#*.}"
  local d="$CACHE/resolve-$prefix"
  mkdir -p "$d"
  gen_pom "[$prefix.0,$major.$((minor + 1)).0)" > "$d/pom.xml"
  "$HERE/../lib/mvn-locked" -q -B -U -Dstyle.color=never -f "$d/pom.xml" dependency:list -DexcludeTransitive=true \
      -DoutputFile="$d/deps.txt" >/dev/null 2>&1 || true
  local repo="${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}/org/apache/rocketmq"
  local b n
  b=$(cat "$repo"/rocketmq-broker/maven-metadata-*.xml 2>/dev/null | grep -oE '<version>[^<]+' | sed 's/<version>//' | sort -u)
  n=$(cat "$repo"/rocketmq-namesrv/maven-metadata-*.xml 2>/dev/null | grep -oE '<version>[^<]+' | sed 's/<version>//' | sort -u)
  comm -12 <(echo "$b") <(echo "$n") | grep -E "^${prefix//./\\.}\.[0-9]+$" | sort -Vr
}

# Concrete version for start/stop: exact as given, "5.3.x" = newest fetched (fetching if none yet).
resolve_version() {
  local v="${1:-$DEFAULT_VERSION}"
  if is_exact "$v"; then echo "$v"; return; fi
  local prefix best; prefix=$(version_prefix "$v")
  best=$(newest_cached "$prefix")
  if [ -z "$best" ]; then cmd_fetch "$v" >/dev/null; best=$(newest_cached "$prefix"); fi
  [ -n "$best" ] || die "could not resolve $v"
  echo "$best"
}

# Maven Central lacks some server artifacts: rocketmq-broker / rocketmq-namesrv 4.9.8 were never published
# there (4.9.8 has only common/remoting/store/client/tools/... jars). For 4.9.8 we therefore take the broker and
# namesrv module jars of 4.9.7 and pin every other org.apache.rocketmq module to 4.9.8 (the broker/namesrv
# modules differ between 4.9.7 and 4.9.8 only by config-update validation and a removed ACL admin command
# (rocketmq-filter 4.9.8 is missing too and is unchanged, so it stays 4.9.7);
# remoting/store/common - incl. MQVersion.CURRENT_VERSION = V4_9_8 - are the 4.9.8 ones).
server_module_version() {
  case "$1" in
    4.9.8) echo 4.9.7 ;;
    *) echo "$1" ;;
  esac
}

gen_pom() { # $1 server-module version (or range), $2 platform version (optional)
  local dm=""
  if [ -n "${2:-}" ] && [ "$2" != "$1" ]; then
    dm="  <dependencyManagement><dependencies>"
    local a
    for a in rocketmq-common rocketmq-remoting rocketmq-logging rocketmq-store rocketmq-client rocketmq-srvutil \
             rocketmq-tools rocketmq-acl; do
      dm="$dm
    <dependency><groupId>org.apache.rocketmq</groupId><artifactId>$a</artifactId><version>$2</version></dependency>"
    done
    dm="$dm
  </dependencies></dependencyManagement>"
  fi
  cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.compat</groupId>
  <artifactId>official-rocketmq-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
$dm
  <dependencies>
    <dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-namesrv</artifactId><version>$1</version></dependency>
    <dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-broker</artifactId><version>$1</version></dependency>
  </dependencies>
</project>
EOF
}

# ---------------------------------------------------------------- fetch
fetch_exact() { # $1 concrete version; returns 1 if Maven cannot provide a complete classpath
  local d="$CACHE/official-$1"
  mkdir -p "$d"
  # one fetch of a version at a time (the runner may run two matrices at once); the second finds it complete
  ( flock 8; fetch_exact_unlocked "$1" ) 8>"$d/.fetch.lock"
}

fetch_exact_unlocked() {
  local v=$1
  local d="$CACHE/official-$v"
  if [ -f "$d/lib/.complete" ]; then log "official $v already fetched ($d/lib)"; echo "$d/lib"; return 0; fi
  local sv; sv=$(server_module_version "$v")
  gen_pom "$sv" "$v" > "$d/pom.xml"
  rm -rf "$d/lib.tmp"
  log "resolving rocketmq-namesrv/rocketmq-broker $v with maven ..."
  if ! "$HERE/../lib/mvn-locked" -q -B -Dstyle.color=never -f "$d/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$d/lib.tmp" > "$d/mvn.log" 2>&1; then
    grep -m1 ERROR "$d/mvn.log" | cut -c1-400 >&2
    log "maven could not resolve a complete classpath for $v"
    rm -rf "$d/lib.tmp"; return 1
  fi
  ls "$d/lib.tmp"/rocketmq-broker-"$sv".jar "$d/lib.tmp"/rocketmq-namesrv-"$sv".jar >/dev/null || { log "rocketmq-broker/namesrv-$sv.jar missing"; return 1; }
  if [ "$sv" != "$v" ]; then
    ls "$d/lib.tmp"/rocketmq-common-"$v".jar "$d/lib.tmp"/rocketmq-store-"$v".jar >/dev/null || { log "rocketmq-common/store-$v.jar missing"; return 1; }
    log "NOTE: rocketmq-broker/namesrv $v are not on Maven Central; using their $sv module jars with $v common/remoting/store"
  fi
  rm -rf "$d/lib"; mv "$d/lib.tmp" "$d/lib"
  touch "$d/lib/.complete"
  log "official $v: $(ls "$d/lib" | grep -c '\.jar$') jars in $d/lib"
  echo "$d/lib"
}

cmd_fetch() {
  local v="${1:-$DEFAULT_VERSION}"
  if is_exact "$v"; then fetch_exact "$v" || die "fetch $v failed"; return; fi
  local prefix c; prefix=$(version_prefix "$v")
  if [ -z "${OFFICIAL_REFRESH:-}" ] && [ -n "$(newest_cached "$prefix")" ]; then
    fetch_exact "$(newest_cached "$prefix")"; return
  fi
  # newest first; some versions are listed but incomplete on Central (e.g. 5.3.4: broker/namesrv only)
  for c in $(candidates "$prefix"); do
    if fetch_exact "$c"; then return 0; fi
    rm -rf "$CACHE/official-$c"
  done
  die "no complete $prefix.x release found on Maven Central"
}

# ---------------------------------------------------------------- helpers
java_opts_common() {
  # JDK 9+ needs these for the mmap/cleaner reflection used by the store (4.9.x especially). Direct memory 1 GiB:
  # with 256 MiB the 5.3.3 broker ran out of it under the 4 MiB-body scenarios (Netty OutOfDirectMemoryError in
  # broker.log), then failed responses and closed connections, and delay-level, retry and timer messages were not delivered.
  echo -server -Xms256m -Xmx256m -Xss512k -XX:MaxDirectMemorySize=1g -XX:+UseG1GC \
    -XX:-OmitStackTraceInFastThrow -XX:+PerfDisableSharedMem \
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
    --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
    --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
    --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED \
    --add-opens=java.base/jdk.internal.misc=ALL-UNNAMED --add-exports=java.base/sun.nio.ch=ALL-UNNAMED \
    --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED \
    -Dio.netty.tryReflectionSetAccessible=true \
    -Djava.net.preferIPv4Stack=true -Dfile.encoding=UTF-8
}

write_logback() { # $1 file, $2 logfile
  cat > "$1" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>$2</file>
    <append>true</append>
    <encoder><pattern>%d{yyyy-MM-dd HH:mm:ss,SSS} %p %t %logger{0} - %m%n</pattern><charset>UTF-8</charset></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
EOF
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# GET_BROKER_CLUSTER_INFO (106) against the nameserver over /dev/tcp; prints the raw response.
ns_cluster_info() {
  local port=$1
  local hdr='{"code":106,"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":409}'
  local hl=${#hdr} len=$(( 4 + ${#hdr} ))
  local frame
  frame=$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x' \
    $(( (len>>24)&255 )) $(( (len>>16)&255 )) $(( (len>>8)&255 )) $(( len&255 )) \
    0 $(( (hl>>16)&255 )) $(( (hl>>8)&255 )) $(( hl&255 )))
  (
    exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
    printf "$frame%s" "$hdr" >&3
    timeout 1 cat <&3 | tr -c "[:print:]" "." || true
  ) 2>/dev/null || true
}

# ---------------------------------------------------------------- start
cmd_start() {
  [ $# -eq 4 ] || die "usage: start VERSION STOREDIR NSPORT BROKERPORT"
  local v store nsport bport
  v=$(resolve_version "$1"); nsport=$3; bport=$4
  mkdir -p "$2"; store="$(cd "$2" && pwd)"
  local lib="$CACHE/official-$v/lib"
  [ -f "$lib/.complete" ] || cmd_fetch "$v" >/dev/null
  local kinds="namesrv broker" ports="$nsport $bport $((bport - 2)) $((bport + 1))"
  if [ -n "${OFFICIAL_NO_NAMESRV:-}" ]; then
    [ -n "${OFFICIAL_BROKER_NAMESRV:-}" ] || die "OFFICIAL_NO_NAMESRV needs OFFICIAL_BROKER_NAMESRV"
    kinds="broker"; ports="$bport $((bport - 2)) $((bport + 1))"
  fi
  local f
  for f in $kinds; do
    f="$f.pid"
    if [ -f "$store/$f" ] && alive "$(cat "$store/$f")"; then die "$store/$f: process $(cat "$store/$f") still running (stop first)"; fi
  done
  # readiness: the broker must show up in the cluster info of the nameserver it registers with (the first one)
  local readyport=$nsport
  if [ -n "${OFFICIAL_BROKER_NAMESRV:-}" ]; then readyport="${OFFICIAL_BROKER_NAMESRV%%;*}"; readyport="${readyport##*:}"; fi
  for p in $ports; do
    port_free "$p" || die "port $p on 127.0.0.1 already in use"
  done

  local home="$store/home" logs="$store/logs"
  mkdir -p "$home/conf" "$logs" "$store/store"
  write_logback "$home/conf/logback_namesrv.xml" "$logs/namesrv.log"
  write_logback "$home/conf/logback_broker.xml" "$logs/broker.log"
  echo "$v" > "$store/official.version"
  # ACL 1.0 (4.9.x): the broker reads $home/conf/plain_acl.yml when OFFICIAL_BROKER_EXTRA has aclEnable=true
  if [ -n "${OFFICIAL_ACL_FILE:-}" ]; then cp "$OFFICIAL_ACL_FILE" "$home/conf/plain_acl.yml"; fi

  cat > "$home/conf/namesrv.properties" <<EOF
listenPort=$nsport
bindAddress=127.0.0.1
rocketmqHome=$home
kvConfigPath=$store/namesrv/kvConfig.json
configStorePath=$home/conf/namesrv.properties
EOF
  cat > "$home/conf/broker.properties" <<EOF
brokerClusterName=DefaultCluster
brokerName=broker-a
brokerId=0
brokerRole=ASYNC_MASTER
flushDiskType=ASYNC_FLUSH
listenPort=$bport
bindAddress=127.0.0.1
brokerIP1=127.0.0.1
brokerIP2=127.0.0.1
namesrvAddr=${OFFICIAL_BROKER_NAMESRV:-127.0.0.1:$nsport}
rocketmqHome=$home
storePathRootDir=$store/store
storePathCommitLog=$store/store/commitlog
autoCreateTopicEnable=true
autoCreateSubscriptionGroup=true
defaultTopicQueueNums=4
mappedFileSizeCommitLog=67108864
mappedFileSizeConsumeQueue=600000
mappedFileSizeTimerLog=16777216
diskMaxUsedSpaceRatio=95
deleteWhen=04
fileReservedTime=48
# a loaded 2-core test box: the defaults (200 ms in the send queue, 1 s page-cache lock) make the broker answer
# SYSTEM_BUSY ([TIMEOUT_CLEAN_QUEUE] / [PC_SYNCHRONIZED]) to ordinary sends, which the 4.9.x client does not retry
waitTimeMillsInSendQueue=5000
osPageCacheBusyTimeOutMills=5000
# transaction check-back every 3 s instead of 60 s (4.9.x) / 30 s (5.x): keeps check scenarios short
transactionCheckInterval=3000
# 5.x writes transaction op records in batches every transactionOpBatchInterval (3 s): with a 3 s check round a
# just-committed half message can be checked (and committed) again, so its message is delivered twice; 4.9.x
# ignores the key
transactionOpBatchInterval=200
# SQL92 property filters (MessageSelector.bySql) need this; off by default in the official broker
enablePropertyFilter=true
# RecallMessage (5.3.x; ignored by 4.9.x) is off by default; RecallMessageTest and the gRPC recall scenario need it
recallMessageEnable=true
${OFFICIAL_BROKER_EXTRA:-}
EOF

  local cp="$lib/*"
  local jopts; jopts=$(java_opts_common)

  # nameserver, then broker. A bind failure ("Address already in use": e.g. a port still held by a lingering
  # socket right after a stop, or taken as an ephemeral port by some client) is retried a few times.
  local deadline=$(( SECONDS + START_TIMEOUT )) kind attempt rc
  for kind in $kinds; do
    for attempt in 1 2 3 4 5 6; do
      rc=0; launch "$kind" || rc=$?
      [ $rc -eq 0 ] && break
      tail -5 "$logs/$kind.out" >&2
      if [ $rc -eq 3 ] && [ $attempt -lt 6 ] && [ $SECONDS -lt $deadline ]; then
        log "$kind: port busy, retrying in 2s (attempt $attempt)"; sleep 2; continue
      fi
      cmd_stop "$store" >/dev/null 2>&1 || true
      die "$kind did not start (see $logs/$kind.out)"
    done
  done
  echo "ready ns=127.0.0.1:$nsport broker=127.0.0.1:$bport"
}

# launch namesrv|broker (uses cmd_start's locals); 0 = up, 3 = bind failure, 1 = other failure/timeout
launch() {
  local kind=$1 main cfgname
  if [ "$kind" = namesrv ]; then main=org.apache.rocketmq.namesrv.NamesrvStartup; else main=org.apache.rocketmq.broker.BrokerStartup; fi
  # shellcheck disable=SC2086
  ROCKETMQ_HOME="$home" nohup java $jopts -Duser.home="$home" -Drocketmq.home.dir="$home" \
      -Dlogback.configurationFile="$home/conf/logback_$kind.xml" \
      -cp "$cp" "$main" -c "$home/conf/$kind.properties" > "$logs/$kind.out" 2>&1 < /dev/null &
  local pid=$!
  echo "$pid" > "$store/$kind.pid"
  while true; do
    if grep -q "boot success" "$logs/$kind.out" 2>/dev/null; then
      [ "$kind" = namesrv ] && return 0
      ns_cluster_info "$readyport" | grep -q "127.0.0.1:$bport" && return 0
    fi
    if ! alive "$pid"; then
      rm -f "$store/$kind.pid"
      grep -q "Address already in use" "$logs/$kind.out" && return 3
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then log "$kind not ready after ${START_TIMEOUT}s"; return 1; fi
    sleep 0.3
  done
}

# ---------------------------------------------------------------- stop
stop_pid() { # $1 pidfile [$2 seconds before KILL, default STOP_TIMEOUT]
  local f=$1 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$(( SECONDS + ${2:-$STOP_TIMEOUT} ))
    while alive "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    if alive "$pid"; then
      # a short grace ($2) is for processes that keep nothing: their KILL is no news
      [ -n "${2:-}" ] || log "pid $pid did not exit after ${STOP_TIMEOUT}s, sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    while alive "$pid"; do sleep 0.1; done
  fi
  rm -f "$f"
}

cmd_stop() {
  [ $# -eq 1 ] || die "usage: stop STOREDIR"
  [ -d "$1" ] || die "no such dir $1"
  stop_pid "$1/broker.pid"   # broker first: it unregisters from the nameserver on shutdown
  # The nameserver keeps nothing a stop must save (kvConfig.json is written at each change) and its Netty shutdown
  # idles ~6 s after SIGTERM (5.3.3, measured): 2 s of grace, then KILL.
  stop_pid "$1/namesrv.pid" 2
  echo "stopped $1"
}

# ---------------------------------------------------------------- proxy (5.x, cluster mode)
fetch_proxy() { # $1 concrete version; prints the proxy lib dir
  local d="$CACHE/official-$1"
  mkdir -p "$d"
  ( flock 8; fetch_proxy_unlocked "$1" ) 8>"$d/.proxy-fetch.lock"
}

fetch_proxy_unlocked() {
  local v=$1 d="$CACHE/official-$1"
  if [ -f "$d/proxy-lib/.complete" ]; then echo "$d/proxy-lib"; return 0; fi
  cat > "$d/proxy-pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.compat</groupId>
  <artifactId>official-rocketmq-proxy-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-proxy</artifactId><version>$v</version></dependency>
  </dependencies>
</project>
EOF
  rm -rf "$d/proxy-lib.tmp"
  log "resolving rocketmq-proxy $v with maven ..."
  if ! "$HERE/../lib/mvn-locked" -q -B -Dstyle.color=never -f "$d/proxy-pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$d/proxy-lib.tmp" > "$d/proxy-mvn.log" 2>&1; then
    grep -m1 ERROR "$d/proxy-mvn.log" | cut -c1-400 >&2
    die "maven could not resolve rocketmq-proxy $v"
  fi
  ls "$d/proxy-lib.tmp"/rocketmq-proxy-"$v".jar >/dev/null || die "rocketmq-proxy-$v.jar missing"
  rm -rf "$d/proxy-lib"; mv "$d/proxy-lib.tmp" "$d/proxy-lib"
  touch "$d/proxy-lib/.complete"
  log "rocketmq-proxy $v: $(ls "$d/proxy-lib" | grep -c '\.jar$') jars in $d/proxy-lib"
  echo "$d/proxy-lib"
}

cmd_proxy_start() {
  [ $# -eq 5 ] || die "usage: proxy-start VERSION DIR NAMESRV GRPCPORT REMOTINGPORT"
  local v dir ns gport rport lib
  v=$(resolve_version "$1"); ns=$3; gport=$4; rport=$5
  [[ "$v" == 5.* ]] || die "rocketmq-proxy exists for 5.x only (got $v)"
  mkdir -p "$2"; dir="$(cd "$2" && pwd)"
  lib=$(fetch_proxy "$v" | tail -1)
  if [ -f "$dir/proxy.pid" ] && alive "$(cat "$dir/proxy.pid")"; then die "$dir/proxy.pid: process $(cat "$dir/proxy.pid") still running"; fi
  for p in "$gport" "$rport"; do port_free "$p" || die "port $p on 127.0.0.1 already in use"; done
  mkdir -p "$dir/conf" "$dir/logs"
  cat > "$dir/conf/rmq-proxy.json" <<EOF
{"rocketMQClusterName":"DefaultCluster","namesrvAddr":"$ns","proxyMode":"cluster","grpcServerPort":$gport,"remotingListenPort":$rport,"grpcShutdownTimeSeconds":3${OFFICIAL_PROXY_EXTRA:+,$OFFICIAL_PROXY_EXTRA}}
EOF
  local jopts; jopts=$(java_opts_common)
  # shellcheck disable=SC2086
  RMQ_PROXY_HOME="$dir" ROCKETMQ_HOME="$dir" nohup java $jopts -Duser.home="$dir" -Drocketmq.home.dir="$dir" \
      -cp "$lib/*" org.apache.rocketmq.proxy.ProxyStartup -pc "$dir/conf/rmq-proxy.json" > "$dir/logs/proxy.out" 2>&1 < /dev/null &
  local pid=$! deadline=$(( SECONDS + START_TIMEOUT ))
  echo "$pid" > "$dir/proxy.pid"
  while ! grep -q "rocketmq-proxy startup successfully" "$dir/logs/proxy.out" 2>/dev/null; do
    if ! alive "$pid"; then rm -f "$dir/proxy.pid"; tail -20 "$dir/logs/proxy.out" >&2; die "proxy exited before it was ready (see $dir/logs/proxy.out)"; fi
    if [ $SECONDS -ge $deadline ]; then stop_pid "$dir/proxy.pid"; die "proxy not ready after ${START_TIMEOUT}s"; fi
    sleep 0.3
  done
  echo "ready proxy grpc=127.0.0.1:$gport remoting=127.0.0.1:$rport"
}

cmd_proxy_stop() {
  [ $# -eq 1 ] || die "usage: proxy-stop DIR"
  [ -d "$1" ] || die "no such dir $1"
  # cluster mode: the proxy keeps no state of its own; its SIGTERM shutdown idles 10-15 s (compat timings)
  stop_pid "$1/proxy.pid" 2
  echo "stopped proxy $1"
}

cmd_kill() {
  [ $# -eq 1 ] || die "usage: kill STOREDIR"
  local f="$1/broker.pid" pid
  [ -f "$f" ] || { echo "no broker running in $1"; return 0; }
  pid=$(cat "$f")
  if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; while alive "$pid"; do sleep 0.05; done; fi
  rm -f "$f"
  echo "killed broker $pid"
}

case "${1:-}" in
  fetch) shift; cmd_fetch "$@" ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  kill) shift; cmd_kill "$@" ;;
  version) shift; resolve_version "${1:-$DEFAULT_VERSION}" ;;
  proxy-fetch) shift; fetch_proxy "$(resolve_version "${1:-5.3.3}")" ;;
  proxy-start) shift; cmd_proxy_start "$@" ;;
  proxy-stop) shift; cmd_proxy_stop "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | grep '^#' >&2; exit 2 ;;
esac

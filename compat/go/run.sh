#!/usr/bin/env bash
# Run the Go-client (github.com/apache/rocketmq-client-go/v2) compatibility scenarios.
#
#   compat/go/run.sh NAMESRV_ADDR [go test args...]
#   compat/go/run.sh 127.0.0.1:9876
#   compat/go/run.sh 127.0.0.1:9876 -run 'TestSendBatch|TestTagFilter'
#
# Modules are downloaded on first use (go.mod/go.sum pin them). Exits non-zero on failure.
# RUN_ID (optional) is used as the topic/group name suffix; default: time + pid.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if [ $# -lt 1 ] || [ -z "$1" ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
export NAMESRV_ADDR="$1"
shift

command -v go >/dev/null || { echo "run.sh: go toolchain not found" >&2; exit 2; }
go mod download
# 'go test' enforces the overall bound; each scenario bounds itself well below it.
exec go test ./... -count=1 -v -timeout 170s "$@"

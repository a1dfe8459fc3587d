#!/usr/bin/env bash
# Captures SQL92 selector results from the real Java filter module (protocol/sql92/vectors-<version>.json).
#
#   protocol/sql92/capture.sh [VERSION ...]      # default: 5.3.3 4.9.8
#
# Uses the official jars fetched by compat/official/official.sh (compat/.cache/official-<v>/lib; for 4.9.8 that
# includes rocketmq-filter 4.9.7, which is what the 4.9.8 broker runs). 4.9.x has no CONTAINS/STARTSWITH/ENDSWITH,
# so cases using them only appear in the 5.x vectors' agreement. Needs java and javac on PATH.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(5.3.3 4.9.8)
for v in "${VERSIONS[@]}"; do
  lib="$ROOT/compat/.cache/official-$v/lib"
  [ -f "$lib/.complete" ] || bash "$ROOT/compat/official/official.sh" fetch "$v" >/dev/null
  out=$(mktemp -d)
  javac -d "$out" -cp "$lib/*" "$HERE/Sql92Golden.java"
  java -cp "$out:$lib/*" Sql92Golden "$HERE/cases.json" > "$HERE/vectors-$v.json"
  rm -rf "$out"
  echo "capture.sh: wrote $HERE/vectors-$v.json ($(grep -c '"java"' "$HERE/vectors-$v.json") cases)" >&2
done

#!/usr/bin/env bash
# Runs COMMAND beside a loopback OCI registry (crane registry serve, go-containerregistry),
# for CI's release and the cluster test's install from it:
#
#   bash scripts/release/registry.sh [--timeout-s N] COMMAND [ARG ...]
#
# The registry listens on 127.0.0.1 at a port the kernel picks (several runs can share the
# machine), its blobs in a temporary directory; COMMAND gets REGISTRY=127.0.0.1:PORT. When
# COMMAND ends, or after N seconds (default 1800: COMMAND is stopped, exit 124), the
# registry is stopped and its directory removed. Exits with COMMAND's status.
set -euo pipefail
source "$(dirname "$0")/tools.sh"
timeout_s=1800
if [[ ${1:-} == --timeout-s ]]; then timeout_s=${2:?--timeout-s needs seconds}; shift 2; fi
(( $# > 0 )) || { echo "usage: scripts/release/registry.sh [--timeout-s N] COMMAND [ARG ...]" >&2; exit 2; }
crane=$(release_tool crane)
dir=$(mktemp -d /tmp/spiderpool-iaas-registry-XXXXXX)
registry_pid=''
cleanup() {
  [[ -z $registry_pid ]] || { kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; }
  rm -rf "$dir"
}
trap cleanup EXIT
mkdir "$dir/blobs" && : >"$dir/log"
"$crane" registry serve --address 127.0.0.1:0 --disk "$dir/blobs" 2>"$dir/log" &
registry_pid=$!
port=''
for (( i = 0; i < 100; i++ )); do
  kill -0 "$registry_pid" 2>/dev/null || { cat "$dir/log" >&2; echo "registry: crane registry serve exited" >&2; exit 1; }
  port=$(sed -n 's/.*serving on port \([0-9]*\)$/\1/p' "$dir/log")
  [[ -z $port ]] || break
  sleep 0.1
done
[[ -n $port ]] || { echo "registry: crane registry serve named no port in 10 s" >&2; exit 1; }
echo "registry: 127.0.0.1:$port (blobs in $dir)" >&2
REGISTRY=127.0.0.1:$port timeout "$timeout_s" "$@"

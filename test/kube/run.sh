#!/usr/bin/env bash
# `npm run test:cluster`: brings up the one-node cluster (cluster.sh up), runs the jest
# suites in test/kube against it, and always tears it down (cluster.sh down, which also
# checks that nothing is left behind), whether a test fails, jest crashes or the run is
# interrupted. Then it proves the teardown on its own: `down` of a half-started cluster
# and a second `down` leave nothing either. Root only (netns, mounts, cgroups, sysctls).
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $(id -u) == 0 ]] || { echo "test:cluster needs root (network namespace, mounts, cgroups, sysctls)" >&2; exit 1; }

dir=$(mktemp -d /tmp/spiderpool-iaas-kube-XXXXXX)
# Where jest's time went (phases.tsv, written by phase-timing.cjs): each file's total, then
# every hook or test of 10 s or more, in the order they ran.
phases() {
  [[ -s $dir/phases.tsv ]] || return 0
  echo "cluster: seconds per file (hooks and tests):"
  awk -F'\t' '{t[$2]+=$1} END {for (f in t) printf "  %7.1f  %s\n", t[f], f}' "$dir/phases.tsv"
  echo "cluster: hooks and tests of 10 s or more:"
  awk -F'\t' '$1 >= 10 {printf "  %7.1f  %s  %s: %s\n", $1, $2, $3, $4}' "$dir/phases.tsv"
}
teardown() {
  local code=$?
  trap - EXIT INT TERM
  phases
  bash test/kube/cluster.sh down "$dir" || code=1
  exit "$code"
}
trap teardown EXIT
trap 'exit 130' INT TERM

start=$SECONDS
bash test/kube/cluster.sh up "$dir"
echo "cluster: up in $(( SECONDS - start ))s"
# Beside a loopback registry ($REGISTRY) that release.test.ts releases to and installs from.
KUBE_E2E_DIR="$dir" NODE_OPTIONS=--experimental-vm-modules bash scripts/release/registry.sh --timeout-s 5400 \
  npx jest -c jest.cluster.config.js --runInBand "$@"
phases
start=$SECONDS
trap - EXIT INT TERM
bash test/kube/cluster.sh down "$dir"
echo "cluster: down in $(( SECONDS - start ))s"

# The teardown on its own: a start cut short (every daemon just started, no image
# imported, the node not yet Ready) is torn down without leftovers, and a second `down`
# is a no-op.
start=$SECONDS
partial=$(mktemp -d /tmp/spiderpool-iaas-kube-XXXXXX)
trap 'bash test/kube/cluster.sh down "$partial"' EXIT
KUBE_CLUSTER_STOP_AFTER=daemons bash test/kube/cluster.sh up "$partial" || true
trap - EXIT
bash test/kube/cluster.sh down "$partial"
bash test/kube/cluster.sh down "$partial"
echo "cluster: teardown of a partial start left nothing behind ($(( SECONDS - start ))s)"

#!/usr/bin/env bash
# Builds the Go tools that cluster files need beyond what every file needs, by name, one after
# another: prometheus, kube-router, cert-manager, helm, cosign. The one list of them and of
# their builds: .ci/run builds them all in the background while the first files run, and a
# file's first hook (tools-built.ts) builds, or waits for, its own. Each build locks its cache
# entry, so a running build is waited for and a cached one answers at once (ADR 0043).
# Usage: build-tools.sh NAME...   (no name: all of them)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/scripts/release/tools.sh"
(( $# > 0 )) || set -- prometheus kube-router helm cert-manager cosign
for tool in "$@"; do
  case $tool in
    prometheus) bash "$root/test/e2e/monitoring/build.sh" ;;
    kube-router) bash "$root/test/kube/policy/build.sh" ;;
    cert-manager) bash "$root/test/kube/cert-manager/build.sh" ;;
    helm | cosign) release_tool "$tool" ;;
    *) echo "build-tools.sh: no tool named $tool (prometheus, kube-router, cert-manager, helm, cosign)" >&2; exit 2 ;;
  esac
done

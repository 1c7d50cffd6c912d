#!/usr/bin/env bash
# Builds the e2e kube-apiserver (this directory's Go module) once per source version and
# links it to bin/apiserver for the cluster tests. Run by `npm run test:e2e` before jest.
#
# The linked binary is kept in a cache outside the clone ($E2E_APISERVER_CACHE, default
# ~/.cache/spiderpool-iaas-webhook-e2e), named by a hash of this script, go.mod, go.sum, the Go sources
# and the Go version: a second run, even from a fresh clone, reuses it at once. A changed
# source builds again, and Go's own module and build caches make that rebuild quick.
set -euo pipefail
cd "$(dirname "$0")"

cache="${E2E_APISERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spiderpool-iaas-webhook-e2e}"
hash=$( { go version; cat build.sh go.mod go.sum ./*.go; } | sha256sum | cut -c1-16)
binary="$cache/kube-apiserver-$hash"
mkdir -p "$cache" bin
# A second caller (CI builds in the background while tests call this) waits for the first.
exec 9>"$binary.lock"
flock 9

if [[ -x "$binary" ]]; then
  echo "e2e kube-apiserver: cached build $binary"
else
  kubernetes=$(grep -E '^\s*k8s.io/kubernetes v' go.mod | awk '{print $2}')
  echo "e2e kube-apiserver: building Kubernetes $kubernetes with $(go version | awk '{print $3}') (the first build on a machine downloads the modules and compiles ~2000 packages: many minutes on 2 cores)"
  start=$SECONDS
  log=$(mktemp)
  # The version a release build stamps (Kubernetes' hack/lib/version.sh), so the API server
  # reports the release it is (`kubectl version`) instead of v0.0.0-master.
  minor=${kubernetes#v1.}
  minor=${minor%%.*}
  ldflags="-X k8s.io/component-base/version.gitVersion=$kubernetes -X k8s.io/component-base/version.gitMajor=1"
  ldflags+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  go build -v -ldflags="$ldflags" -o "$binary.tmp.$$" . 2>"$log" &
  build=$!
  # A line every 30 s, so CI shows progress rather than silence.
  while kill -0 "$build" 2>/dev/null; do
    sleep 5
    if (( (SECONDS - start) % 30 < 5 )); then
      echo "e2e kube-apiserver: $(( SECONDS - start ))s, $(grep -cv '^go: ' "$log" || true) packages compiled"
    fi
  done
  if ! wait "$build"; then
    grep -v '^[a-zA-Z0-9._/-]*$' "$log" >&2 || cat "$log" >&2
    rm -f "$log" "$binary.tmp.$$"
    echo "e2e kube-apiserver: build failed" >&2
    exit 1
  fi
  rm -f "$log"
  mv "$binary.tmp.$$" "$binary"
  echo "e2e kube-apiserver: built in $(( SECONDS - start ))s: $binary"
fi
# Relinked only when it changes, so a running reader never sees it missing.
[[ $(readlink bin/apiserver) == "$binary" ]] || ln -sfn "$binary" bin/apiserver

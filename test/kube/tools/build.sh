#!/usr/bin/env bash
# Builds the one-node cluster's tools (this directory's Go module) once per source
# version: kubelet, kube-controller-manager, kube-scheduler, kube-proxy and kubectl from
# the same k8s.io/kubernetes release as test/e2e/apiserver (go.mod pins it), and the
# static pause binary. Run by `npm run test:cluster` before jest; links bin/ to the build.
#
# The binaries are kept in a cache outside the clone ($E2E_APISERVER_CACHE, default
# ~/.cache/spiderpool-iaas-webhook-e2e) in kube-tools-HASH/, HASH covering this script,
# go.mod, go.sum, the Go sources and the Go version, exactly as the API server's build.sh:
# a second run, even from a fresh clone, reuses them at once.
set -euo pipefail
cd "$(dirname "$0")"

cache="${E2E_APISERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spiderpool-iaas-webhook-e2e}"
hash=$( { go version; cat build.sh go.mod go.sum; find cmd -name '*.go' | sort | xargs cat; } | sha256sum | cut -c1-16)
out="$cache/kube-tools-$hash"
mkdir -p "$cache"
# A second caller (CI builds in the background while tests call this) waits for the first.
exec 9>"$out.lock"
flock 9

if [[ -x "$out/kubelet" ]]; then
  echo "kube tools: cached build $out"
else
  kubernetes=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
  echo "kube tools: building kubelet, kube-controller-manager, kube-scheduler, kube-proxy and kubectl $kubernetes (Go's build cache holds the API server's packages after its build: a few minutes on 2 cores; from nothing ~6 min)"
  start=$SECONDS
  tmp="$out.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  minor=${kubernetes#v1.}
  minor=${minor%%.*}
  # The version a release build stamps (Kubernetes' hack/lib/version.sh); -s -w: the
  # binaries are ~30% smaller without symbols, nothing here debugs them.
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kubernetes -X k8s.io/component-base/version.gitMajor=1"
  ldflags+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  log=$(mktemp)
  if ! { nice go build -ldflags="$ldflags" -o "$tmp/" ./cmd/kubelet ./cmd/kube-controller-manager ./cmd/kube-scheduler ./cmd/kube-proxy ./cmd/kubectl &&
         CGO_ENABLED=0 nice go build -ldflags="-s -w" -o "$tmp/" ./cmd/pause; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -rf "$log" "$tmp"
    echo "kube tools: build failed" >&2
    exit 1
  fi
  rm -f "$log"
  rm -rf "$out"
  mv "$tmp" "$out"
  echo "kube tools: built in $(( SECONDS - start ))s: $out"
fi
# Relinked only when it changes, so a running reader never sees it missing.
[[ $(readlink bin) == "$out" ]] || ln -sfn "$out" bin

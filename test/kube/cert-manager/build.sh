#!/usr/bin/env bash
# Builds cert-manager's controller and cainjector (v1.21.2, the newest v1.21 patch the
# module proxy serves) through .ci/go-tool --in-module (cached by content outside the
# clone) and prints the directory holding both static binaries. controller/ and
# cainjector/ here are the two commands, built inside cert-manager's own module with its
# go.mod and go.sum: the proxy does not serve its nested cmd/controller and cmd/cainjector
# modules. cert-manager's webhook is not built: the CRDs (the module's deploy/crds) are
# v1-only and need no conversion webhook, and the test's objects are valid as written.
# `cluster.sh cert-manager-images` runs it when certmanager.test.ts starts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CGO_ENABLED=0 exec "$here/../../../.ci/go-tool" --in-module cert-manager \
  github.com/cert-manager/cert-manager@v1.21.2 "$here" -- -trimpath -ldflags=-s\ -w

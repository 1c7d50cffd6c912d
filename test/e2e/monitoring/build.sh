#!/usr/bin/env bash
# Builds promtool and prometheus from Prometheus' Go module (v0.316.0 is Prometheus 3.x)
# through .ci/go-tool (cached by content outside the clone) and prints the directory
# holding both. `remove_all_sd` leaves out every service-discovery SDK (cloud providers,
# Kubernetes, Consul, ...): the tests use static targets only, and the build is far
# smaller. npm's pretest:e2e runs it; the e2e and cluster tests call it too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../../.ci/go-tool" prometheus github.com/prometheus/prometheus@v0.316.0 \
  github.com/prometheus/prometheus/cmd/promtool github.com/prometheus/prometheus/cmd/prometheus \
  -- -tags remove_all_sd

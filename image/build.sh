#!/usr/bin/env bash
# Builds the project's Dockerfile as CI does, without Docker: the base images from Debian
# packages (image/base.sh, cached), then `buildah bud` with the host's CA bundle and a
# build-only .npmrc mounted into the RUN steps only (npm reaches the registry through a
# TLS-intercepting proxy whose CA is in the host bundle); nothing of either is in the
# image. Tags $WEBHOOK_IMAGE (image/env.sh). --layers reuses unchanged steps.
set -euo pipefail
cd "$(dirname "$0")/.."
source image/env.sh

bases=$(bash image/base.sh)
node_image=$(sed -n 's/^NODE_IMAGE=//p' <<<"$bases")
runtime_image=$(sed -n 's/^NODE_RUNTIME_IMAGE=//p' <<<"$bases")

ca_bundle=/etc/ssl/certs/ca-certificates.crt
npmrc=$(mktemp)
trap 'rm -f "$npmrc"' EXIT
printf "cafile=/etc/ssl/certs/ca-certificates.crt\nupdate-notifier=false\nfund=false\naudit=false\n" > "$npmrc"
chmod 0644 "$npmrc"

start=$SECONDS
nice buildah bud --quiet --layers --network host \
  -v "$ca_bundle:/etc/ssl/certs/ca-certificates.crt:ro" -v "$npmrc:/root/.npmrc:ro" \
  --build-arg NODE_IMAGE="$node_image" --build-arg NODE_RUNTIME_IMAGE="$runtime_image" \
  -t "$WEBHOOK_IMAGE" . >/dev/null
echo "image: $WEBHOOK_IMAGE built in $(( SECONDS - start ))s ($(podman image inspect --format '{{.Size}}' "$WEBHOOK_IMAGE" | awk '{printf "%d MB", $1/1e6}'))"

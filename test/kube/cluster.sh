#!/usr/bin/env bash
# A one-node Kubernetes cluster for the install test (test/kube/), everything inside a
# network namespace this script creates and removes. Root only.
#
#   cluster.sh up DIR     start it; DIR (empty, outside the clone) holds all its state
#   cluster.sh down DIR   stop everything, undo every host change, then check that nothing
#                         is left; idempotent (safe after a failed or partial `up`, twice)
#   cluster.sh registry DIR PORT   let the node pull from the host's registry 127.0.0.1:PORT
#   cluster.sh cert-manager-images DIR   import cert-manager's images (built when not cached)
#
# Components, all from the same Kubernetes release (test/kube/tools, test/e2e/apiserver):
# kube-apiserver with embedded etcd (the e2e launcher), kube-controller-manager,
# kube-scheduler, kube-proxy (iptables mode: routes the `kubernetes` Service's ClusterIP
# for the webhook's in-cluster pool cache) and the kubelet; Debian's containerd with runc
# and the bridge CNI plugin; the pause image from test/kube/tools/cmd/pause; cert-manager's
# controller and cainjector images on request (test/kube/cert-manager; the test installs them).
# Measured facts behind the settings: docs in /work/shared/cluster/one-node-cluster.md
# (copied into the comments here where they matter).
#
# After `up`, DIR/kubeconfig reaches the API server from the host through a loopback
# forward (socat on 127.0.0.1, DIR/server), and DIR/kubectl is the release's kubectl.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cmd=${1:?usage: cluster.sh up|down DIR}
W=${2:?usage: cluster.sh up|down DIR}
W=$(realpath -m "$W")

NODE_IP=10.200.0.2
NODE_NAME=k1node
POD_SUBNET=10.244.0.0/24
# Every node's pods (second-node.sh adds 10.244.1.0/24).
CLUSTER_CIDR=10.244.0.0/16
SERVICE_RANGE=10.96.0.0/24
APISERVER_PORT=6443
# The three global (not per-namespace) sysctls the kubelet rewrites with
# protectKernelDefaults: false; saved at `up`, restored at `down`.
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops)
# Kept equal to test/kube/cert-manager.ts (the Deployments there name these images).
CERT_MANAGER_IMAGE_PREFIX=localhost/spiderpool-iaas-e2e/cert-manager
CERT_MANAGER_VERSION=v1.21.2

tools="$here/tools/bin"
NODE_DIR=$W
# shellcheck source=test/kube/node-lib.sh
source "$here/node-lib.sh"

kc() { "$tools/kubectl" --kubeconfig="$W/kubeconfig" "$@"; }

# Imports TAG into the node's containerd: BINARY (static) alone, as /NAME and the
# entrypoint, in a one-layer docker-archive (no registry is reachable).
static_image() {
  local tag=$1 binary=$2
  local name img layer config
  name=$(basename "$binary")
  img="$W/images/$name"
  mkdir -p "$img/rootfs"
  cp "$binary" "$img/rootfs/$name"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$img/rootfs" -cf "$img/layer.tar" "$name"
  layer=$(sha256sum "$img/layer.tar" | cut -d' ' -f1)
  mv "$img/layer.tar" "$img/$layer.tar"
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/%s"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$name" "$layer" >"$img/config.json"
  config=$(sha256sum "$img/config.json" | cut -d' ' -f1)
  mv "$img/config.json" "$img/$config.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s.tar"]}]' "$config" "$tag" "$layer" >"$img/manifest.json"
  tar -C "$img" -cf "$img.tar" manifest.json "$config.json" "$layer.tar"
  ctr_node images import "$img.tar" >/dev/null
}

up() {
  [[ -z "$(ls -A "$W" 2>/dev/null)" ]] || { log "$W is not empty"; exit 1; }
  mkdir -p "$W"/{logs,pids,containerd,cni/net.d,cni/ipam,kubelet,pod-logs,images}
  for tool in kubelet kube-controller-manager kube-scheduler kube-proxy kubectl pause; do
    [[ -x "$tools/$tool" ]] || { log "$tools/$tool is missing: run test/kube/tools/build.sh"; exit 1; }
  done
  [[ -x "$root/test/e2e/apiserver/bin/apiserver" ]] || { log "the API server is missing: run test/e2e/apiserver/build.sh"; exit 1; }

  # What the host looks like now, so `down` restores exactly this.
  sysctl "${SYSCTLS[@]}" >"$W/sysctl.orig"
  for path in /run/containerd /var/log/containers; do
    [[ -e "$path" ]] && echo "$path" >>"$W/existed-before"
  done
  : >>"$W/existed-before"

  # --- network: one namespace, no link out (the default route is a black hole) -------
  local ns
  ns="spiaas-$(basename "$W" | tr -dc 'a-zA-Z0-9' | tail -c 8)"
  echo "$ns" >"$W/netns"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  # veth with both ends inside: this kernel has no "dummy" links.
  ip -n "$ns" link add k1veth0 type veth peer name k1veth1
  ip -n "$ns" addr add "$NODE_IP/24" dev k1veth0
  ip -n "$ns" link set k1veth0 up
  ip -n "$ns" link set k1veth1 up
  ip -n "$ns" route add default via 10.200.0.1 dev k1veth0
  in_netns sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  write_cni_config k1cni0 "$POD_SUBNET"

  # --- containerd ------------------------------------------------------------------------
  write_containerd_config
  start_containerd

  # The images (none for run.sh's partial start, which only stops the daemons again).
  # The pause image: a static binary as a one-layer image.
  if [[ "${KUBE_CLUSTER_STOP_AFTER:-}" != daemons ]]; then
    local t=$SECONDS
    static_image "$PAUSE_IMAGE" "$tools/pause"
    # The webhook image built by image/build.sh, as a docker-archive.
    (source "$root/image/env.sh" && buildah push --quiet "$WEBHOOK_IMAGE" "docker-archive:$W/images/webhook.tar:$WEBHOOK_IMAGE" >/dev/null)
    ctr_node images import "$W/images/webhook.tar" >/dev/null
    rm -rf "$W/images"
    log "images imported in $((SECONDS - t))s"
  fi

  # --- the API server ----------------------------------------------------------------------
  # It exits when stdin reaches EOF: a fifo held open by a sleep feeds it.
  mkfifo "$W/apiserver.stdin"
  setsid sleep infinity >"$W/apiserver.stdin" 2>/dev/null </dev/null &
  echo $! >"$W/pids/apiserver-stdin"
  # Extra flags, each what a real control plane has and the launcher (loopback only) does
  # not: the node IP advertised and published as the `kubernetes` Service's endpoint by
  # the lease reconciler (the Pods' in-cluster config dials its ClusterIP, routed by
  # kube-proxy); webhooks and aggregated APIs dialled at their endpoints rather than at
  # ClusterIPs (this is what calls the webhook's Service without a proxy on the API
  # server's own path); kubelets by their InternalIP (there is no DNS for the node name).
  setsid nsenter --net="/run/netns/$ns" "$root/test/e2e/apiserver/bin/apiserver" --port="$APISERVER_PORT" -- \
    --advertise-address="$NODE_IP" --endpoint-reconciler-type=lease \
    --enable-aggregator-routing=true --kubelet-preferred-address-types=InternalIP \
    <"$W/apiserver.stdin" >"$W/apiserver.ready" 2>"$W/logs/apiserver.log" &
  echo $! >"$W/pids/apiserver"
  wait_for "the API server" 180 grep -q kubeconfig "$W/apiserver.ready"
  local inner
  inner=$(node -pe 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]).kubeconfig' "$W/apiserver.ready")
  cp "$inner" "$W/kubeconfig.node" # https://127.0.0.1:6443, inside the netns
  # The launcher serves on 127.0.0.1 only, so the node IP (the advertised endpoint that
  # kube-proxy sends the `kubernetes` Service to) is forwarded to it inside the netns; in
  # a real cluster the API server listens on the node IP itself.
  daemon apiserver-node-ip socat "TCP-LISTEN:$APISERVER_PORT,bind=$NODE_IP,reuseaddr,fork" "TCP:127.0.0.1:$APISERVER_PORT"

  # The test runner's way in: a loopback port on the host forwarded into the netns (the
  # serving certificate's SANs include 127.0.0.1).
  local port
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  setsid socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" \
    "EXEC:nsenter --net=/run/netns/$ns socat STDIO TCP\:127.0.0.1\:$APISERVER_PORT" >"$W/logs/forward.log" 2>&1 </dev/null &
  echo $! >"$W/pids/forward"
  sed "s#https://127.0.0.1:$APISERVER_PORT#https://127.0.0.1:$port#" "$W/kubeconfig.node" >"$W/kubeconfig"
  echo "https://127.0.0.1:$port" >"$W/server"
  ln -s "$tools/kubectl" "$W/kubectl"
  wait_for "the forward to the API server" 30 kc get --raw /readyz

  # --- controllers, scheduler, kube-proxy, kubelet ---------------------------------------
  local K="$W/kubeconfig.node"
  daemon kube-controller-manager "$tools/kube-controller-manager" --kubeconfig="$K" --leader-elect=false \
    --bind-address=127.0.0.1 --service-cluster-ip-range="$SERVICE_RANGE" --controllers='*'
  daemon kube-scheduler "$tools/kube-scheduler" --kubeconfig="$K" --leader-elect=false --bind-address=127.0.0.1
  write_kube_proxy_config "$K" "$NODE_NAME" "$CLUSTER_CIDR"
  write_kubelet_config "$NODE_IP"
  start_node_agents "$K" "$NODE_IP" "$NODE_NAME"
  # For run.sh's teardown check: a start cut short with every daemon just started.
  if [[ "${KUBE_CLUSTER_STOP_AFTER:-}" == daemons ]]; then
    log "stopping after starting the daemons (KUBE_CLUSTER_STOP_AFTER=daemons)"
    exit 1
  fi
  wait_for "the node to be Ready" 120 kc wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
  wait_for "the kubernetes Service's endpoint" 60 sh -c "'$tools/kubectl' --kubeconfig='$W/kubeconfig' get endpointslice -n default -l kubernetes.io/service-name=kubernetes -o jsonpath='{.items[*].endpoints[*].addresses[*]}' | grep -qx '$NODE_IP'"
  log "up: node $NODE_NAME Ready ($(kc version -o json | node -pe 'JSON.parse(require("fs").readFileSync(0)).serverVersion.gitVersion')), kubeconfig $W/kubeconfig"
}

# The host's loopback registry 127.0.0.1:PORT (scripts/release/registry.sh) for the node:
# the same address inside the netns, forwarded through a Unix socket in DIR (a socket file
# crosses network namespaces), and a hosts.toml telling containerd it speaks plain HTTP.
registry() {
  local port=${1:?usage: cluster.sh registry DIR PORT}
  [[ $port =~ ^[0-9]+$ && -S "$W/containerd/containerd.sock" ]] || { log "registry: PORT must be a number, DIR a running cluster"; exit 2; }
  setsid socat "UNIX-LISTEN:$W/registry.sock,fork" "TCP:127.0.0.1:$port" >"$W/logs/registry-host.log" 2>&1 </dev/null &
  echo $! >"$W/pids/registry-host"
  daemon registry-node socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$W/registry.sock"
  mkdir -p "$W/containerd/certs.d/127.0.0.1:$port"
  printf 'server = "http://127.0.0.1:%s"\n[host."http://127.0.0.1:%s"]\n  capabilities = ["pull", "resolve"]\n' "$port" "$port" \
    >"$W/containerd/certs.d/127.0.0.1:$port/hosts.toml"
  wait_for "the registry from the node" 30 in_netns curl -sf "http://127.0.0.1:$port/v2/"
  log "registry: the node pulls from http://127.0.0.1:$port"
}

# cert-manager's controller and cainjector (test/kube/cert-manager, built when not cached),
# each a static binary as a one-layer image; imported when the test that installs them
# starts, so that the cluster starts before cert-manager is built.
cert_manager_images() {
  [[ -S "$W/containerd/containerd.sock" ]] || { log "cert-manager-images: DIR must be a running cluster"; exit 2; }
  local cert_manager
  cert_manager=$(bash "$here/cert-manager/build.sh")
  mkdir -p "$W/images"
  static_image "$CERT_MANAGER_IMAGE_PREFIX-controller:$CERT_MANAGER_VERSION" "$cert_manager/controller"
  static_image "$CERT_MANAGER_IMAGE_PREFIX-cainjector:$CERT_MANAGER_VERSION" "$cert_manager/cainjector"
  rm -rf "$W/images"
}

down() {
  [[ -d "$W" ]] || { log "$W does not exist: nothing to do"; return 0; }
  local ns t=$SECONDS took=()
  ns=$(netns_name)
  # 0. The second node, when a test added one (second-node.sh checks what it leaves).
  bash "$here/second-node.sh" down "$W" || return 1
  # 1. The node's agents first, so nothing restarts containers.
  stop_daemon kubelet
  stop_daemon kube-proxy
  stop_daemon kube-scheduler
  stop_daemon kube-controller-manager
  took+=("agents $((SECONDS - t))s"); t=$SECONDS
  # 2. Every container and sandbox, then containerd and its shims.
  stop_containers
  took+=("containers $((SECONDS - t))s"); t=$SECONDS
  # 3. The API server, its stdin holder, the forwards.
  stop_daemon forward
  stop_daemon apiserver-node-ip
  stop_daemon apiserver
  stop_daemon apiserver-stdin
  stop_daemon registry-node
  stop_daemon registry-host
  took+=("control-plane $((SECONDS - t))s"); t=$SECONDS
  # 4. Anything still alive in the netns or naming DIR (container processes, shims).
  local pid
  if [[ -n "$ns" && -e "/run/netns/$ns" ]]; then
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
  fi
  for pid in $(pids_naming "$W"); do kill -KILL "$pid" 2>/dev/null || true; done
  # Pods' processes, in netns of their own, when a loaded containerd missed its 5 s above:
  # by their cgroups under /kubepods, only while no other kubelet (another cluster) runs.
  if ! pgrep -f '/kubelet --config=' >/dev/null; then
    for pid in $(find /sys/fs/cgroup/pids/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
  fi
  sleep 0.2
  took+=("leftover-processes $((SECONDS - t))s"); t=$SECONDS
  # 5. Mounts under DIR, deepest first (Secret tmpfs, overlay rootfs, shm, netns files,
  #    the kubelet root's bind mount of itself).
  unmount_under "$W"
  took+=("mounts $((SECONDS - t))s"); t=$SECONDS
  # 6. The netns (its bridge and veths go with it).
  [[ -n "$ns" && -e "/run/netns/$ns" ]] && ip netns del "$ns"
  # 7. The kubelet's cgroups (cgroupfs driver), innermost first.
  local d
  for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [[ -d "$d" ]] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  # 8. The sysctls.
  [[ -s "$W/sysctl.orig" ]] && sysctl -q -p "$W/sysctl.orig"
  # 9. Paths outside DIR: runc's root and the shim sockets (/run/containerd), the
  #    kubelet's hard-coded log symlinks (/var/log/containers), when this run made them.
  local path
  for path in /run/containerd /var/log/containers; do
    if [[ -e "$path" ]] && ! grep -qxF "$path" "$W/existed-before" 2>/dev/null; then rm -rf "$path"; fi
  done

  took+=("rest $((SECONDS - t))s")
  log "down: ${took[*]}"
  # Check: nothing left behind.
  local left=()
  [[ -n "$(pids_naming "$W")" ]] && left+=("processes: $(pids_naming "$W" | tr '\n' ' ')")
  for f in "$W"/pids/*; do [[ -e "$f" ]] && left+=("pid file $f"); done
  [[ -n "$(mounts_under "$W")" ]] && left+=("mounts: $(mounts_under "$W" | tr '\n' ' ')")
  [[ -n "$ns" && -e "/run/netns/$ns" ]] && left+=("netns $ns")
  for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do [[ -d "$d" ]] && left+=("cgroup $d"); done
  for path in /run/containerd /var/log/containers; do
    [[ -e "$path" ]] && ! grep -qxF "$path" "$W/existed-before" 2>/dev/null && left+=("$path")
  done
  if [[ -s "$W/sysctl.orig" ]] && ! diff -q <(sysctl "${SYSCTLS[@]}") "$W/sysctl.orig" >/dev/null; then
    left+=("sysctls: $(sysctl "${SYSCTLS[@]}" | tr '\n' ' ') (were $(tr '\n' ' ' <"$W/sysctl.orig"))")
  fi
  if ((${#left[@]} > 0)); then
    log "down: LEFT BEHIND (state kept in $W): ${left[*]}"
    return 1
  fi
  rm -rf "$W"
  log "down: nothing left behind"
}

case "$cmd" in
  up) up ;;
  down) down ;;
  registry) registry "${3:-}" ;;
  cert-manager-images) cert_manager_images ;;
  *) echo "usage: cluster.sh up|down|cert-manager-images DIR | cluster.sh registry DIR PORT" >&2; exit 2 ;;
esac

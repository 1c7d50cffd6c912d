# Sourced by cluster.sh and second-node.sh: what a node of the test cluster is made of
# (containerd, the bridge CNI, kube-proxy, the kubelet), each node in a network namespace
# of its own with its state under NODE_DIR (NODE_DIR/netns names the namespace; logs/ and
# pids/ hold each daemon's output and pid). Callers set NODE_DIR and `tools`.

PAUSE_IMAGE=localhost/spiderpool-iaas-e2e/pause:1

log() { echo "cluster: $*" >&2; }
netns_name() { cat "$NODE_DIR/netns" 2>/dev/null || true; }
in_netns() { nsenter --net="/run/netns/$(netns_name)" "$@"; }

# Starts a daemon inside the node's netns in its own process group, output to
# NODE_DIR/logs/NAME.log; its pid goes to NODE_DIR/pids/NAME.
daemon() {
  local name=$1
  shift
  setsid nsenter --net="/run/netns/$(netns_name)" "$@" >>"$NODE_DIR/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$NODE_DIR/pids/$name"
}

wait_for() {
  local what=$1 timeout=$2
  shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      log "timed out after ${timeout}s waiting for $what"
      return 1
    fi
    sleep 0.5
  done
}

# Whether pid runs (a zombie does not: the daemons' parent, `up`, is gone, and whoever
# inherited them may reap late).
alive() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n "$state" && "$state" != Z ]]
}

# Ends a process by pid (TERM, KILL after 10 s) and its process group (setsid above).
stop_pid() {
  local pid=$1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do
    alive "$pid" || return 0
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}

stop_daemon() {
  local file="$NODE_DIR/pids/$1"
  [[ -f "$file" ]] || return 0
  stop_pid "$(cat "$file")"
  rm -f "$file"
}

# Pids of processes whose command line names DIR/ (shims, leftovers of a crashed run).
pids_naming() {
  local dir=$1 p cmdline
  for p in /proc/[0-9]*; do
    [[ "${p#/proc/}" == "$$" ]] && continue
    # Compared in bash, so no helper process carries DIR in its own command line.
    cmdline=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    [[ "$cmdline" == *"$dir/"* ]] && echo "${p#/proc/}"
  done
  return 0
}

mounts_under() { awk -v dir="$1/" 'index($5, dir) == 1 { print $5 }' /proc/self/mountinfo | sort -r; }

# Unmounts everything under DIR, deepest first (Secret tmpfs, overlay rootfs, shm, netns
# files, the kubelet root's bind mount of itself).
unmount_under() {
  local m
  for _ in 1 2 3; do
    for m in $(mounts_under "$1"); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  done
}

# The bridge CNI network of the node: BRIDGE, pods in SUBNET, state under NODE_DIR/cni.
write_cni_config() {
  local bridge=$1 subnet=$2
  cat >"$NODE_DIR/cni/net.d/10-$bridge.conflist" <<EOF
{"cniVersion":"0.4.0","name":"$bridge","plugins":[{"type":"bridge","bridge":"$bridge","isGateway":true,"ipMasq":false,"hairpinMode":true,
 "ipam":{"type":"host-local","ranges":[[{"subnet":"$subnet"}]],"routes":[{"dst":"0.0.0.0/0"}],"dataDir":"$NODE_DIR/cni/ipam"}}]}
EOF
}

# containerd's configuration, everything under NODE_DIR/containerd.
write_containerd_config() {
  local c="$NODE_DIR/containerd"
  cat >"$c/config.toml" <<EOF
version = 2
root = "$c/root"
state = "$c/state"
[grpc]
  address = "$c/containerd.sock"
[ttrpc]
  address = "$c/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$c/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Required here: without CAP_SYS_RESOURCE runc cannot apply the negative
  # oom_score_adj the kubelet asks for, and every sandbox fails to start.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "/usr/sbin/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_DIR/cni/net.d"
  # Per-registry hosts.toml files, read at each pull (cluster.sh registry writes one).
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$c/certs.d"
EOF
}

ctr_node() { ctr --address "$NODE_DIR/containerd/containerd.sock" -n k8s.io "$@"; }

start_containerd() {
  daemon containerd containerd --config "$NODE_DIR/containerd/config.toml"
  wait_for containerd 30 ctr_node version
}

# kube-proxy in iptables mode for NODE_NAME, with KUBECONFIG; the pods of every node are CLUSTER_CIDR.
write_kube_proxy_config() {
  local kubeconfig=$1 node_name=$2 cluster_cidr=$3
  cat >"$NODE_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$kubeconfig"}
mode: iptables
hostnameOverride: $node_name
clusterCIDR: $cluster_cidr
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
oomScoreAdj: 0
# 0 = leave the host's conntrack table size and timeouts alone (nf_conntrack_max is
# global, not per network namespace).
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

# The kubelet's configuration for a node at NODE_IP; CGROUP_ROOT (optional) is where its
# pods' cgroups go, so that two kubelets on one host never manage each other's pods.
write_kubelet_config() {
  local node_ip=$1 cgroup_root=${2:-}
  cat >"$NODE_DIR/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false          # the host is cgroup v1 (hybrid)
failSwapOn: false
cgroupDriver: cgroupfs        # no systemd
${cgroup_root:+cgroupRoot: $cgroup_root}
containerRuntimeEndpoint: unix://$NODE_DIR/containerd/containerd.sock
address: $node_ip
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
# The API server has no kubelet client certificate (kubectl logs goes API server -> kubelet).
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
podLogsDir: $NODE_DIR/pod-logs
resolvConf: ""                # the host's resolver is unreachable from the sealed netns
protectKernelDefaults: false  # true makes it exit ("invalid kernel flag"); down restores them
imageGCHighThresholdPercent: 100
# The images are imported, never pulled. Since 1.35 a kubelet that pulled an image ID from a
# registry re-pulls it for any other name (KubeletEnsureSecretPulledImages): the release's
# image shares the imported image's ID, and the imported name has no registry to pull from.
imagePullCredentialsVerificationPolicy: NeverVerify
evictionHard: {memory.available: 100Mi, nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
# A test cluster's shorter pod sync (default 1m): a Secret's new content reaches the mounted
# volume at the pod's next sync, so each certificate change the tests make (cert-manager's
# renewal and CA change, install's CA change) waited ~57-67 s on it. 10s keeps the same
# path (Secret watch, then the volume rewrite, then the pod's own reload) and the tests
# still wait until every pod serves the new certificate; the wait is just shorter.
syncFrequency: 10s
EOF
}

# kube-proxy and the kubelet of the node (configurations written above), with KUBECONFIG.
start_node_agents() {
  local kubeconfig=$1 node_ip=$2 node_name=$3
  daemon kube-proxy "$tools/kube-proxy" --config="$NODE_DIR/kube-proxy.yaml"
  daemon kubelet "$tools/kubelet" --config="$NODE_DIR/kubelet-config.yaml" --kubeconfig="$kubeconfig" \
    --root-dir="$NODE_DIR/kubelet" --node-ip="$node_ip" --hostname-override="$node_name"
}

# Every container and sandbox killed and deleted, then containerd stopped (its shims go
# with their containers).
stop_containers() {
  if [[ -S "$NODE_DIR/containerd/containerd.sock" ]] && timeout 5 ctr_node version >/dev/null 2>&1; then
    local c
    for c in $(timeout 10 ctr_node tasks ls -q 2>/dev/null); do
      timeout 10 ctr_node tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true
    done
    sleep 0.5
    for c in $(timeout 10 ctr_node containers ls -q 2>/dev/null); do
      timeout 10 ctr_node tasks delete -f "$c" >/dev/null 2>&1 || true
      timeout 10 ctr_node containers delete "$c" >/dev/null 2>&1 || true
    done
  fi
  stop_daemon containerd
}

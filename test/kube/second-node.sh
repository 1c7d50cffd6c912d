#!/usr/bin/env bash
# The test cluster's second node (test/kube/twonode.test.ts), beside the one cluster.sh
# starts: its own containerd, kubelet and kube-proxy in a network namespace of its own,
# linked to the first node's by a veth pair, pods routed between the nodes. Root only.
#
#   second-node.sh up DIR      start it (DIR: the cluster's, after `cluster.sh up DIR`)
#   second-node.sh kill DIR    power it off: every packet in its namespace dropped (no RST),
#                              then its pods frozen and every process of the node SIGKILLed
#   second-node.sh revive DIR  power it on: the drop removed, its daemons started again
#   second-node.sh cut DIR     pod traffic between the two nodes dropped (both still reach
#                              the API server); `heal DIR` lets it through again
#   second-node.sh down DIR    stop everything and undo every change, then check that
#                              nothing is left; idempotent (cluster.sh down calls it)
#
# Names are the run's own: the namespace is the first node's plus "-k2" (cluster.sh names
# that after DIR), and so is the cgroup root of the node's pods; addresses live only inside
# the two namespaces, which have no link out.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:?usage: second-node.sh up|kill|revive|cut|heal|down DIR}
W=$(realpath -m "${2:?usage: second-node.sh up|kill|revive|cut|heal|down DIR}")
tools="$here/tools/bin"
NODE_DIR="$W/node2"
# shellcheck source=test/kube/node-lib.sh
source "$here/node-lib.sh"

NODE_NAME=k2node
NODE_IP=10.200.1.2
LINK_IP=10.200.1.1 # the first node's end of the link
POD_SUBNET=10.244.1.0/24
FIRST_POD_SUBNET=10.244.0.0/24
CLUSTER_CIDR=10.244.0.0/16
FIRST_NODE_IP=10.200.0.2 # cluster.sh's NODE_IP: the API server's address for the nodes
APISERVER_PORT=6443

first_ns() { cat "$W/netns" 2>/dev/null || true; }
in_first() { nsenter --net="/run/netns/$(first_ns)" "$@"; }
# The node's pods' cgroups: a root of their own, so neither kubelet manages the other's.
cgroup_root() { echo "/$(netns_name)"; }
cgroup_dirs() { local ns; ns=$(netns_name); [[ -n "$ns" ]] && ls -d /sys/fs/cgroup/*/"$ns" 2>/dev/null; return 0; }
# Pids of the node's pod processes (containers and sandboxes), from its cgroups.
pod_pids() { local d; d="/sys/fs/cgroup/pids$(cgroup_root)"; [[ -d "$d" ]] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null; return 0; }
# The rules a powered-off node amounts to: nothing in or out of its namespace.
drop_rules() { local op=$1; in_netns iptables -w -t raw "$op" PREROUTING -j DROP && in_netns iptables -w -t raw "$op" OUTPUT -j DROP; }
cut_rules() {
  local op=$1
  in_first iptables -w "$op" FORWARD -s "$FIRST_POD_SUBNET" -d "$POD_SUBNET" -j DROP &&
    in_first iptables -w "$op" FORWARD -s "$POD_SUBNET" -d "$FIRST_POD_SUBNET" -j DROP
}
kc() { "$tools/kubectl" --kubeconfig="$W/kubeconfig" "$@"; }

# The API server forward (its certificate names 127.0.0.1), kube-proxy and the kubelet.
start_agents() {
  daemon apiserver-forward socat "TCP-LISTEN:$APISERVER_PORT,bind=127.0.0.1,reuseaddr,fork" "TCP:$FIRST_NODE_IP:$APISERVER_PORT"
  start_node_agents "$W/kubeconfig.node" "$NODE_IP" "$NODE_NAME"
  # The kubelet answering first: a node just killed is still Ready until its grace period ends.
  wait_for "the kubelet of $NODE_NAME" 60 in_netns curl -sf -m 2 http://127.0.0.1:10248/healthz
  wait_for "node $NODE_NAME to be Ready" 120 kc wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
}

up() {
  [[ -n "$(first_ns)" && -e "/run/netns/$(first_ns)" ]] || { log "no cluster in $W: run cluster.sh up first"; exit 1; }
  [[ ! -e "$NODE_DIR" ]] || { log "$NODE_DIR exists: a second node is up"; exit 1; }
  local t=$SECONDS ns h
  mkdir -p "$NODE_DIR"/{logs,pids,containerd,cni/net.d,cni/ipam,kubelet,pod-logs}
  ns="$(first_ns)-k2"
  echo "$ns" >"$NODE_DIR/netns"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip -n "$(first_ns)" link add k2link0 type veth peer name k2link1 netns "$ns"
  ip -n "$(first_ns)" addr add "$LINK_IP/24" dev k2link0
  ip -n "$(first_ns)" link set k2link0 up
  ip -n "$ns" addr add "$NODE_IP/24" dev k2link1
  ip -n "$ns" link set k2link1 up
  ip -n "$ns" route add default via "$LINK_IP"
  ip -n "$(first_ns)" route add "$POD_SUBNET" via "$NODE_IP"
  in_netns sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  for h in /sys/fs/cgroup/*/; do mkdir -p "$h$ns"; done
  # A new cpuset cgroup starts with no CPU and no memory node: the root's.
  cp /sys/fs/cgroup/cpuset/cpuset.cpus "/sys/fs/cgroup/cpuset/$ns/cpuset.cpus"
  cp /sys/fs/cgroup/cpuset/cpuset.mems "/sys/fs/cgroup/cpuset/$ns/cpuset.mems"
  write_cni_config k2cni0 "$POD_SUBNET"
  write_containerd_config
  start_containerd
  # The first node's images (pause, webhook; cert-manager's once imported), exported from its containerd.
  local refs
  refs=$(NODE_DIR=$W ctr_node images ls -q | grep '^localhost/')
  # shellcheck disable=SC2086
  NODE_DIR=$W ctr_node images export "$NODE_DIR/images.tar" $refs
  ctr_node images import "$NODE_DIR/images.tar" >/dev/null
  rm -f "$NODE_DIR/images.tar"
  write_kube_proxy_config "$W/kubeconfig.node" "$NODE_NAME" "$CLUSTER_CIDR"
  write_kubelet_config "$NODE_IP" "$(cgroup_root)"
  start_agents
  log "up: node $NODE_NAME Ready in $((SECONDS - t))s"
}

# Every process of the node at once: its pods frozen first (no process of theirs runs
# another instruction), then the daemons, shims and pods SIGKILLed, then thawed to die.
kill_processes() {
  local freezer pid f
  freezer="/sys/fs/cgroup/freezer$(cgroup_root)"
  [[ -d "$freezer" ]] && echo FROZEN >"$freezer/freezer.state"
  for f in "$NODE_DIR"/pids/*; do
    [[ -e "$f" ]] || continue
    pid=$(cat "$f")
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    rm -f "$f"
  done
  for pid in $(pids_naming "$NODE_DIR") $(pod_pids); do kill -KILL "$pid" 2>/dev/null || true; done
  [[ -d "$freezer" ]] && echo THAWED >"$freezer/freezer.state"
  return 0
}

power_off() {
  [[ -e "$NODE_DIR/netns" ]] || { log "no second node in $W"; exit 1; }
  drop_rules -I
  kill_processes
  log "kill: node $NODE_NAME is off (packets dropped, processes killed)"
}

power_on() {
  drop_rules -D
  start_containerd
  start_agents
  log "revive: node $NODE_NAME Ready"
}

heal() { while cut_rules -C 2>/dev/null; do cut_rules -D; done; }

down() {
  [[ -d "$NODE_DIR" ]] || return 0
  local ns pid d t=$SECONDS
  ns=$(netns_name)
  stop_daemon kubelet
  stop_daemon kube-proxy
  stop_daemon apiserver-forward
  stop_containers
  kill_processes
  [[ -n "$ns" && -e "/run/netns/$ns" ]] && for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
  sleep 0.2
  unmount_under "$NODE_DIR"
  if [[ -n "$(first_ns)" && -e "/run/netns/$(first_ns)" ]]; then
    heal
    ip -n "$(first_ns)" route del "$POD_SUBNET" 2>/dev/null || true
    # The pair at once: a deleted namespace frees its links only once the kernel has cleaned it up.
    ip -n "$(first_ns)" link del k2link0 2>/dev/null || true
  fi
  [[ -n "$ns" && -e "/run/netns/$ns" ]] && ip netns del "$ns"
  for d in $(cgroup_dirs); do find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true; done
  local left=()
  [[ -n "$(pids_naming "$NODE_DIR")" ]] && left+=("processes: $(pids_naming "$NODE_DIR" | tr '\n' ' ')")
  [[ -n "$(mounts_under "$NODE_DIR")" ]] && left+=("mounts: $(mounts_under "$NODE_DIR" | tr '\n' ' ')")
  [[ -n "$ns" && -e "/run/netns/$ns" ]] && left+=("netns $ns")
  [[ -n "$(cgroup_dirs)" ]] && left+=("cgroups: $(cgroup_dirs | tr '\n' ' ')")
  if [[ -n "$(first_ns)" && -e "/run/netns/$(first_ns)" ]] && in_first ip route show "$POD_SUBNET" | grep -q .; then left+=("route to $POD_SUBNET"); fi
  if [[ -n "$(first_ns)" && -e "/run/netns/$(first_ns)" ]] && in_first ip link show k2link0 >/dev/null 2>&1; then left+=("link k2link0"); fi
  if ((${#left[@]} > 0)); then
    log "second node down: LEFT BEHIND (state kept in $NODE_DIR): ${left[*]}"
    return 1
  fi
  rm -rf "$NODE_DIR"
  log "second node down in $((SECONDS - t))s: nothing left behind"
}

case "$cmd" in
  up) up ;;
  kill) power_off ;;
  revive) power_on ;;
  cut) cut_rules -I ;;
  heal) heal ;;
  down) down ;;
  *) echo "usage: second-node.sh up|kill|revive|cut|heal|down DIR" >&2; exit 2 ;;
esac

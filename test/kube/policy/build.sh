#!/usr/bin/env bash
# Builds kube-router (its network policy controller enforces NetworkPolicy with iptables
# and ipset) through .ci/go-tool (cached by content outside the clone) and prints the
# directory holding it. test/kube/neighbour.test.ts runs it
# first (test/kube/tools-built.ts). v2.1.0 is the release the Go module proxy serves.
#
# Why not sigs.k8s.io/kube-network-policies (SIG Network's enforcer, the one kind runs):
# it diverts new connections with the nftables `queue` expression, and this machine's
# kernel is built without it (CONFIG_NFT_QUEUE is not set): `nft add rule inet t c queue
# num 100` fails with "Could not process rule: No such file or directory". The iptables
# matches and ipset kube-router uses are there (CONFIG_IP_SET, CONFIG_NETFILTER_XT_SET).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../../.ci/go-tool" kube-router github.com/cloudnativelabs/kube-router/v2@v2.1.0 \
  github.com/cloudnativelabs/kube-router/v2/cmd/kube-router

// Command apiserver runs a real kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver, the
// release pinned in go.mod) with an embedded etcd, in one process, for the webhook's
// end-to-end tests. Test tooling only: it is never part of the webhook.
//
//	apiserver --port 43210 [-- KUBE-APISERVER-FLAG...]
//
// Flags after `--` are passed to kube-apiserver after this program's own, so they add to
// or override them (the one-node cluster test, test/kube/, gives --bind-address,
// --advertise-address and the lease endpoint reconciler so that Pods reach the
// `kubernetes` Service, and --enable-aggregator-routing).
//
// It listens on 127.0.0.1 only: the API server on --port (chosen by the caller), etcd on
// two ports the OS hands out. Everything it writes (etcd data, the API server's
// self-signed serving certificate, service-account keys, the token file, a kubeconfig)
// lives in one temporary directory that is removed when it exits. When /readyz answers
// "ok" it prints one JSON line on stdout and keeps serving:
//
//	{"kubeconfig":"/tmp/kube-apiserver-e2e-123/kubeconfig","server":"https://127.0.0.1:43210"}
//
// It exits, removing the directory, when standard input reaches EOF (the parent closed
// it or died), on SIGTERM, SIGINT or SIGHUP, or when the API server or etcd stops. It never
// outlives the test run that started it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// startupTimeout bounds etcd's and the API server's start: a cold start on two busy
// cores takes well under a minute.
const startupTimeout = 3 * time.Minute

var (
	cleanupOnce sync.Once
	workDir     string
)

// exit removes the temporary directory and ends the process; safe to call from any
// goroutine, the first caller wins.
func exit(code int, why string) {
	cleanupOnce.Do(func() {
		fmt.Fprintf(os.Stderr, "apiserver: exiting (%s)\n", why)
		if workDir != "" {
			_ = os.RemoveAll(workDir)
		}
		os.Exit(code)
	})
	select {} // another goroutine is already exiting
}

func main() {
	port := flag.Int("port", 0, "secure port of the API server on 127.0.0.1 (required)")
	flag.Parse()
	if *port <= 0 || *port > 65535 {
		fmt.Fprintln(os.Stderr, "apiserver: --port must be 1-65535")
		os.Exit(2)
	}

	dir, err := os.MkdirTemp("", "kube-apiserver-e2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "apiserver: %v\n", err)
		os.Exit(1)
	}
	workDir = dir
	watchParent()

	etcdURL, err := startEtcd(filepath.Join(dir, "etcd"))
	if err != nil {
		exit(1, fmt.Sprintf("etcd: %v", err))
	}
	files, err := writeCredentials(dir)
	if err != nil {
		exit(1, fmt.Sprintf("credentials: %v", err))
	}

	server := fmt.Sprintf("https://127.0.0.1:%d", *port)
	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(append(apiServerArgs(*port, etcdURL, files), flag.Args()...))
	go func() {
		if err := cmd.Execute(); err != nil {
			exit(1, fmt.Sprintf("kube-apiserver: %v", err))
		}
		exit(0, "kube-apiserver stopped")
	}()

	if err := waitReady(server, files, startupTimeout); err != nil {
		exit(1, fmt.Sprintf("kube-apiserver not ready: %v", err))
	}
	kubeconfig, err := writeKubeconfig(dir, server, files)
	if err != nil {
		exit(1, fmt.Sprintf("kubeconfig: %v", err))
	}
	ready, _ := json.Marshal(map[string]string{"kubeconfig": kubeconfig, "server": server})
	fmt.Println(string(ready))
	select {}
}

// watchParent ends the process when stdin closes or a stop signal arrives. The API
// server installs its own handler for the same signals (it would shut down gracefully
// and leave the directory); both are notified and this one removes the directory first.
func watchParent() {
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		exit(0, "stdin closed")
	}()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		s := <-signals
		exit(0, s.String())
	}()
}

// apiServerArgs are the kube-apiserver flags: loopback only, the static token for
// kubectl, RBAC as in a real cluster (the token's user is in system:masters), and
// nothing that needs a node, a scheduler, a cloud or a network plugin.
func apiServerArgs(port int, etcdURL string, f credentialFiles) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		fmt.Sprintf("--secure-port=%d", port),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The default (lease) reconciler publishes the advertise address as the endpoint
		// of the "kubernetes" Service and refuses a loopback one; nothing here needs it.
		"--endpoint-reconciler-type=none",
		// No TLS pair given: kube-apiserver writes a self-signed CA and serving
		// certificate for 127.0.0.1/localhost here (apiserver.crt holds both).
		"--cert-dir=" + f.certDir,
		"--token-auth-file=" + f.tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f.serviceAccountKey,
		"--service-account-signing-key-file=" + f.serviceAccountKey,
		// Required by the Service REST storage; no traffic is ever routed.
		"--service-cluster-ip-range=10.96.0.0/24",
		"--profiling=false",
	}
}

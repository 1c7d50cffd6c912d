// Command pause is the sandbox ("pause") container of the test cluster's Pods: it holds
// the Pod's namespaces, reaps the zombies of its PID namespace and exits on SIGTERM or
// SIGINT. Built static (CGO_ENABLED=0) into a one-file image by test/kube/tools/build.sh,
// because no registry with registry.k8s.io/pause is reachable. Test tooling only.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}

// Command controller runs cert-manager's own controllers (github.com/cert-manager/cert-manager
// v1.21, pkg/controller) for the one-node cluster test: the Issuer controller, the
// Certificate controllers (trigger, key manager, request manager, issuing, readiness,
// revision manager) and the CertificateRequest approver with its SelfSigned and CA
// signers, which is all the chart's tls.method=certmanager objects need. It stands in for
// cert-manager's cmd/controller, whose nested Go module the module proxy does not serve
// (404 for github.com/cert-manager/cert-manager/cmd/controller/@v/list). The wiring below
// uses pkg/controller's own API as a controller binary must: one ContextFactory, each
// registered constructor, the shared informers started once the controllers are built
// (they register their informers while being built), then every controller's Run. Leader election and most flags are left out: one replica, in-cluster
// credentials, every namespace, ClusterIssuer resources in --cluster-resource-namespace;
// --enable-certificate-owner-ref as cert-manager's own flag.
//
// Built by .ci/go-tool --in-module inside cert-manager's own module (its go.mod and go.sum).
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

// enabled names the controllers this command runs (their ControllerName constants).
var enabled = []string{
	issuers.ControllerName,
	trigger.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	issuing.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
	approver.ControllerName,
	crselfsigned.CRControllerName,
	crca.CRControllerName,
}

func main() {
	resourceNamespace := flag.String("cluster-resource-namespace", "cert-manager", "namespace of the Secrets ClusterIssuers read")
	ownerRef := flag.Bool("enable-certificate-owner-ref", false, "make each Certificate the owner of its Secret, so deleting it deletes the Secret (cert-manager's flag of that name)")
	klog.InitFlags(nil)
	flag.Parse()
	logf.InitLogs()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, klog.Background(), "cert-manager")
	log := logf.FromContext(ctx)

	opts := controllerpkg.ContextOptions{
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: *resourceNamespace},
		// cert-manager's flag defaults (--certificate-request-minimum-backoff-duration, --max-...).
		CertificateOptions: controllerpkg.CertificateOptions{
			EnableOwnerRef:                           *ownerRef,
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
		SchedulerOptions: controllerpkg.SchedulerOptions{MaxConcurrentChallenges: 60},
	}
	factory, err := controllerpkg.NewContextFactory(ctx, opts)
	if err != nil {
		log.Error(err, "cannot build the controller context")
		os.Exit(1)
	}
	known := controllerpkg.Known()
	running := map[string]controllerpkg.Interface{}
	for _, name := range enabled {
		construct, ok := known[name]
		if !ok {
			log.Error(nil, "controller not registered", "controller", name)
			os.Exit(1)
		}
		c, err := construct(factory)
		if err != nil {
			log.Error(err, "cannot construct controller", "controller", name)
			os.Exit(1)
		}
		running[name] = c
	}
	shared, err := factory.Build()
	if err != nil {
		log.Error(err, "cannot build the shared context")
		os.Exit(1)
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	if shared.GatewaySolverEnabled {
		shared.GWShared.Start(ctx.Done())
	}
	done := make(chan string, len(running))
	for name, c := range running {
		go func() {
			log.Info("starting controller", "controller", name)
			if err := c.Run(5, ctx); err != nil {
				log.Error(err, "controller stopped", "controller", name)
			}
			done <- name
		}()
	}
	<-ctx.Done()
	for range running {
		<-done
	}
}

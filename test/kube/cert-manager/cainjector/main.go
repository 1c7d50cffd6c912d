// Command cainjector runs cert-manager's CA injector (github.com/cert-manager/cert-manager
// v1.21, pkg/controller/cainjector) for the one-node cluster test: it copies the ca.crt of
// the Certificate (cert-manager.io/inject-ca-from) or Secret (inject-ca-from-secret) an
// annotation names into the caBundle of validating and mutating webhook configurations.
// It stands in for cert-manager's cmd/cainjector, whose nested Go module the module proxy
// does not serve (404 for github.com/cert-manager/cert-manager/cmd/cainjector/@v/list).
// The manager is set up as RegisterAllInjectors expects: Secrets read uncached (its
// watches cache their metadata only); one replica without leader election, no metrics or
// health listeners. APIServices and CRD conversion are not injected (nothing here asks).
//
// Built by .ci/go-tool --in-module inside cert-manager's own module (its go.mod and go.sum).
package main

import (
	"os"

	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	apireg "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/util"
)

func main() {
	ctrl.SetLogger(klog.NewKlogr())
	log := ctrl.Log.WithName("cainjector")
	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiext.AddToScheme(scheme))
	utilruntime.Must(apireg.AddToScheme(scheme))

	cfg := util.RestConfigWithUserAgent(ctrl.GetConfigOrDie(), "cainjector")
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Client: client.Options{
			Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}},
		},
	})
	if err != nil {
		log.Error(err, "cannot create the manager")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.MutatingWebhookConfigurationName:   true,
		},
	})
	if err != nil {
		log.Error(err, "cannot register the injectors")
		os.Exit(1)
	}
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

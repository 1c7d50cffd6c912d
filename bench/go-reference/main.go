// Command go-reference is the benchmark's Go reference: the same two checks as the
// TypeScript webhook, written the way Spiderpool's own webhooks are (controller-runtime's
// webhook/admission package decodes the AdmissionReview, apierrors.NewInvalid renders the
// denial), served over HTTPS on an ephemeral loopback port. It exists only to be measured
// by `npm run bench`; it is not a second implementation to ship.
//
// It prints one JSON line {"port":N} on stdout once it listens, serves /readyz and
// /healthz, and stops on SIGTERM or SIGINT.
//
// With -pool-cache-kubeconfig FILE it serves nothing and is instead the reference of
// `npm run bench -- --scale`: a controller-runtime cache of SpiderIPPools with default
// options (cache.New, an informer keeping whole objects, as a Go webhook author would
// write it without Spiderpool's Go types: unstructured), started against that cluster; it
// prints {"syncedMs":N} once WaitForCacheSync returns, then waits for SIGTERM.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"
)

const iaasProviderAnnotation = "ipam.spidernet.io/iaas-provider"

var spiderIPPool = schema.GroupKind{Group: "spiderpool.spidernet.io", Kind: "SpiderIPPool"}

// pool holds the SpiderIPPool fields the rule reads; json ignores the rest.
type pool struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		NodeName []string `json:"nodeName"`
	} `json:"spec"`
}

// conf is the part of Spiderpool's conf.yml the rule reads.
type conf struct {
	IaasNetworkProvider struct {
		ServerURL          string `json:"serverUrl"`
		HTTPRequestTimeout string `json:"httpRequestTimeout"`
	} `json:"iaasNetworkProvider"`
}

func invalid(gk schema.GroupKind, name string, errs field.ErrorList) admission.Response {
	status := apierrors.NewInvalid(gk, name, errs).ErrStatus
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// reviewPool applies the design's rule: on UPDATE, the IaaS annotation may not be added or
// removed, and an IaaS pool may not gain or lose spec.nodeName.
func reviewPool(req admission.Request) admission.Response {
	if req.Operation != admissionv1.Update || req.SubResource != "" {
		return admission.Allowed("")
	}
	var oldPool, newPool pool
	if err := json.Unmarshal(req.OldObject.Raw, &oldPool); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if err := json.Unmarshal(req.Object.Raw, &newPool); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	_, wasIaaS := oldPool.Metadata.Annotations[iaasProviderAnnotation]
	_, isIaaS := newPool.Metadata.Annotations[iaasProviderAnnotation]
	var errs field.ErrorList
	if wasIaaS != isIaaS {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(iaasProviderAnnotation),
			"a pool's category is fixed for its life; delete the pool and create it again"))
	}
	if wasIaaS && (len(oldPool.Spec.NodeName) > 0) != (len(newPool.Spec.NodeName) > 0) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "nodeName"),
			"an IaaS pool's mode is fixed for its life; delete the pool and create it again"))
	}
	if len(errs) > 0 {
		return invalid(spiderIPPool, newPool.Metadata.Name, errs)
	}
	return admission.Allowed("")
}

// reviewConfigMap checks spiderpool-conf's iaasNetworkProvider block as Spiderpool's agent
// does at start: serverUrl an http(s) URL with a host, httpRequestTimeout a Go duration in
// (0, 100s) (empty means 50s).
func reviewConfigMap(req admission.Request) admission.Response {
	if req.Name != "spiderpool-conf" || req.SubResource != "" ||
		(req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return admission.Allowed("")
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(req.Object.Raw, &cm); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	path := field.NewPath("data").Key("conf.yml")
	var c conf
	if err := yaml.Unmarshal([]byte(cm.Data["conf.yml"]), &c); err != nil {
		return invalid(schema.GroupKind{Kind: "ConfigMap"}, req.Name, field.ErrorList{field.Invalid(path, "", err.Error())})
	}
	p := c.IaasNetworkProvider
	if p.ServerURL == "" {
		return admission.Allowed("")
	}
	var errs field.ErrorList
	if u, err := url.Parse(p.ServerURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, field.Invalid(path.Child("iaasNetworkProvider", "serverUrl"), p.ServerURL, "must be an http(s) URL with a host"))
	}
	timeout := 50 * time.Second
	if p.HTTPRequestTimeout != "" {
		d, err := time.ParseDuration(p.HTTPRequestTimeout)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("iaasNetworkProvider", "httpRequestTimeout"), p.HTTPRequestTimeout, err.Error()))
		}
		timeout = d
	}
	if timeout <= 0 || timeout >= 100*time.Second {
		errs = append(errs, field.Invalid(path.Child("iaasNetworkProvider", "httpRequestTimeout"), p.HTTPRequestTimeout, "must be in (0, 100s)"))
	}
	if len(errs) > 0 {
		return invalid(schema.GroupKind{Kind: "ConfigMap"}, req.Name, errs)
	}
	return admission.Allowed("")
}

func review(_ context.Context, req admission.Request) admission.Response {
	switch {
	case req.Kind.Group == spiderIPPool.Group && req.Kind.Kind == spiderIPPool.Kind:
		return reviewPool(req)
	case req.Kind.Group == "" && req.Kind.Kind == "ConfigMap":
		return reviewConfigMap(req)
	}
	return admission.Allowed("")
}

// poolCache runs the SpiderIPPool cache reference (see the package comment) until SIGTERM.
func poolCache(kubeconfig string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	c, err := cache.New(config, cache.Options{})
	if err != nil {
		fail(err)
	}
	pools := &unstructured.Unstructured{}
	pools.SetGroupVersionKind(schema.GroupVersionKind{Group: "spiderpool.spidernet.io", Version: "v2beta1", Kind: "SpiderIPPool"})
	started := time.Now()
	if _, err := c.GetInformer(ctx, pools); err != nil {
		fail(err)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			fail(err)
		}
	}()
	if !c.WaitForCacheSync(ctx) {
		fail(fmt.Errorf("the cache did not sync"))
	}
	fmt.Printf("{\"syncedMs\":%d}\n", time.Since(started).Milliseconds())
	<-ctx.Done()
}

func main() {
	certDir := flag.String("cert-dir", "", "directory with tls.crt and tls.key")
	host := flag.String("host", "127.0.0.1", "address to bind")
	port := flag.Int("port", 0, "port; 0 picks a free one")
	poolCacheKubeconfig := flag.String("pool-cache-kubeconfig", "", "run the SpiderIPPool cache reference against this cluster instead of serving")
	flag.Parse()
	// controller-runtime logs each review at V(5) only; nothing is logged per request at the default level.
	logf.SetLogger(logr.Discard())
	if *poolCacheKubeconfig != "" {
		poolCache(*poolCacheKubeconfig)
		return
	}

	cert, err := tls.LoadX509KeyPair(filepath.Join(*certDir, "tls.crt"), filepath.Join(*certDir, "tls.key"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	webhook := &admission.Webhook{Handler: admission.HandlerFunc(review)}
	mux := http.NewServeMux()
	mux.Handle("/validate-spiderippool", webhook)
	mux.Handle("/validate-configmap", webhook)
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }
	mux.HandleFunc("/readyz", ok)
	mux.HandleFunc("/healthz", ok)

	listener, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server := &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Printf("{\"port\":%d}\n", listener.Addr().(*net.TCPAddr).Port)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.ServeTLS(listener, "", ""); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

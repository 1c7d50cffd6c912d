package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// credentialFiles are the files the API server reads at start.
type credentialFiles struct {
	certDir           string
	tokens            string
	token             string
	serviceAccountKey string
}

// writeCredentials writes a random bearer token for an admin user in system:masters
// (the --token-auth-file CSV format: token,user,uid,"groups") and an RSA key that
// signs and verifies service-account tokens.
func writeCredentials(dir string) (credentialFiles, error) {
	f := credentialFiles{
		certDir:           filepath.Join(dir, "certs"),
		tokens:            filepath.Join(dir, "tokens.csv"),
		serviceAccountKey: filepath.Join(dir, "service-account.key"),
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return f, err
	}
	f.token = hex.EncodeToString(secret)
	line := fmt.Sprintf("%s,e2e-admin,e2e-admin,\"system:masters\"\n", f.token)
	if err := os.WriteFile(f.tokens, []byte(line), 0o600); err != nil {
		return f, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return f, err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return f, os.WriteFile(f.serviceAccountKey, keyPEM, 0o600)
}

// servingCA is the API server's self-signed serving certificate and its CA, as written
// to --cert-dir (k8s.io/client-go/util/cert.GenerateSelfSignedCertKeyWithFixtures).
func servingCA(f credentialFiles) ([]byte, error) {
	return os.ReadFile(filepath.Join(f.certDir, "apiserver.crt"))
}

// waitReady polls /readyz (every post-start hook done: RBAC roles, CRD informers...)
// until it answers 200, verifying the serving certificate once it has been written.
func waitReady(server string, f credentialFiles, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := errors.New("no answer yet")
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		ca, err := servingCA(f)
		if err != nil {
			continue // not written yet
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			last = errors.New("apiserver.crt holds no certificate")
			continue
		}
		client := &http.Client{
			Timeout:   5 * time.Second,
			Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		}
		req, err := http.NewRequest(http.MethodGet, server+"/readyz", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+f.token)
		resp, err := client.Do(req)
		if err != nil {
			last = err
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return fmt.Errorf("after %s: %w", timeout, last)
}

// writeKubeconfig writes a kubeconfig for kubectl and client libraries: the server,
// its CA, and the admin token.
func writeKubeconfig(dir, server string, f credentialFiles) (string, error) {
	ca, err := servingCA(f)
	if err != nil {
		return "", err
	}
	config := clientcmdapi.NewConfig()
	config.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	config.AuthInfos["e2e-admin"] = &clientcmdapi.AuthInfo{Token: f.token}
	config.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e-admin"}
	config.CurrentContext = "e2e"
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*config, path)
}

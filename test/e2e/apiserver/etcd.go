package main

import (
	"fmt"
	"net"
	"net/url"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startEtcd starts a single-member etcd in this process, on two loopback ports the OS
// hands out, and returns its client URL once it serves. Settings follow Kubernetes' own
// embedded test etcd (k8s.io/apiserver/pkg/storage/etcd3/testserver): no fsync (the
// data is thrown away) and only errors logged.
func startEtcd(dataDir string) (string, error) {
	clientURL, err := freeLoopbackURL()
	if err != nil {
		return "", err
	}
	peerURL, err := freeLoopbackURL()
	if err != nil {
		return "", err
	}
	cfg := embed.NewConfig()
	cfg.Dir = dataDir
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(startupTimeout):
		e.Close()
		return "", fmt.Errorf("not ready after %s", startupTimeout)
	}
	go func() {
		// etcd failing later takes the API server's storage with it: stop the whole run.
		if err, ok := <-e.Err(); ok && err != nil {
			exit(1, fmt.Sprintf("etcd: %v", err))
		}
	}()
	return clientURL.String(), nil
}

// freeLoopbackURL asks the OS for a free port on 127.0.0.1. The port is released
// before etcd binds it; the window is microseconds, as in Kubernetes' own test etcd.
func freeLoopbackURL() (*url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "http", Host: addr}, nil
}

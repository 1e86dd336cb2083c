// Command etcd runs a single-member etcd, embedded from
// go.etcd.io/etcd/server/v3, for the end-to-end API server. It listens on
// loopback only, keeps its data in --data-dir, and stops on SIGTERM/SIGINT.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for etcd's data (required)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "URL clients (kube-apiserver) connect to")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "URL of the single member's peer listener")
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("etcd: --data-dir is required")
	}
	client, err := url.Parse(*clientURL)
	if err != nil {
		log.Fatalf("etcd: --listen-client-url %q: %v", *clientURL, err)
	}
	peer, err := url.Parse(*peerURL)
	if err != nil {
		log.Fatalf("etcd: --listen-peer-url %q: %v", *peerURL, err)
	}

	cfg := embed.NewConfig()
	cfg.Name = "e2e"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	// Test data is thrown away: fsync only costs time on a shared CI disk.
	cfg.UnsafeNoFsync = true

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("etcd: start: %v", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintln(os.Stdout, "etcd ready", client.String())
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		log.Fatal("etcd: not ready after 60s")
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case err := <-e.Err():
		log.Fatalf("etcd: %v", err)
	}
}

package node

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// ClusterDNS is the cluster's resolver for the agent's Pods, what
// CoreDNS's kubernetes plugin is in a cluster: it answers
// <service>.<namespace>.svc.cluster.local with the Service's cluster IP,
// from a Service informer, on port 53 (UDP and TCP) of the bridge's
// gateway address. A small responder rather than the e2e CoreDNS build
// with a hosts file: the answer comes from the informer's cache, so a new
// Service resolves as soon as the informer has it, with no file to keep
// in step and no process to supervise.
//
// It answers A queries of Services with a cluster IP; a known name's
// other types get an empty answer (NODATA, so a resolver's AAAA query
// does not fail the lookup); everything else, headless and ExternalName
// Services included, is NXDOMAIN: the bridge has no route to any other
// resolver to forward to.
type ClusterDNS struct {
	// Address is where it listens, the nameserver of the Pods' resolv.conf.
	Address  string
	services cache.Indexer
}

const (
	// dnsTimeout bounds reading one TCP query and writing its answer.
	dnsTimeout = 5 * time.Second
	// dnsTTL is short: a test deletes and recreates Services.
	dnsTTL = 5
)

// StartClusterDNS starts the resolver on n's gateway address until ctx
// ends; it returns once the Service informer has synced.
func StartClusterDNS(ctx context.Context, t testing.TB, c kubernetes.Interface, n *Network) (*ClusterDNS, error) {
	factory := informers.NewSharedInformerFactory(c, 0)
	inf := factory.Core().V1().Services().Informer()
	d := &ClusterDNS{Address: n.Gateway, services: inf.GetIndexer()}
	addr := net.JoinHostPort(n.Gateway, "53")
	udp, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("cluster DNS: %w", err)
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		udp.Close()
		return nil, fmt.Errorf("cluster DNS: %w", err)
	}
	factory.Start(ctx.Done())
	go func() { <-ctx.Done(); udp.Close(); tcp.Close() }()
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("cluster DNS: the Service informer did not sync in 30s")
	}
	go d.serveUDP(t, udp)
	go d.serveTCP(t, tcp)
	return d, nil
}

func (d *ClusterDNS) serveUDP(t testing.TB, conn net.PacketConn) {
	buf := make([]byte, 512)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				t.Logf("cluster DNS: UDP: %v", err)
			}
			return
		}
		if answer, err := d.answer(buf[:n]); err == nil {
			_, _ = conn.WriteTo(answer, from)
		}
	}
}

func (d *ClusterDNS) serveTCP(t testing.TB, ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				t.Logf("cluster DNS: TCP: %v", err)
			}
			return
		}
		go d.serveConn(conn)
	}
}

// serveConn answers the length-prefixed queries of one TCP connection.
func (d *ClusterDNS) serveConn(conn net.Conn) {
	defer conn.Close()
	for {
		_ = conn.SetDeadline(time.Now().Add(dnsTimeout))
		var size [2]byte
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			return
		}
		query := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(conn, query); err != nil {
			return
		}
		answer, err := d.answer(query)
		if err != nil {
			return
		}
		if _, err := conn.Write(binary.BigEndian.AppendUint16(nil, uint16(len(answer)))); err != nil {
			return
		}
		if _, err := conn.Write(answer); err != nil {
			return
		}
	}
}

// answer is the response to one query message.
func (d *ClusterDNS) answer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	resp := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RCode: dnsmessage.RCodeSuccess}
	ip, known := d.lookup(q.Name.String())
	if !known {
		resp.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, resp)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if known && q.Type == dnsmessage.TypeA && q.Class == dnsmessage.ClassINET {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: dnsTTL}
		if err := b.AResource(rh, dnsmessage.AResource{A: ip.As4()}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// lookup is the cluster IP of the Service name stands for, false when
// name is no Service with one.
func (d *ClusterDNS) lookup(name string) (netip.Addr, bool) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	rest, ok := strings.CutSuffix(name, ".svc."+ClusterDomain)
	if !ok {
		return netip.Addr{}, false
	}
	svc, ns, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(ns, ".") {
		return netip.Addr{}, false
	}
	obj, exists, err := d.services.GetByKey(ns + "/" + svc)
	if err != nil || !exists {
		return netip.Addr{}, false
	}
	ip, err := netip.ParseAddr(obj.(*corev1.Service).Spec.ClusterIP)
	if err != nil || !ip.Is4() {
		return netip.Addr{}, false
	}
	return ip, true
}

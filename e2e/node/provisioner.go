package node

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// GatewayNameLabel is the label tlsplane reads a Gateway's address from:
// the load-balancer ingress of the Services in the Gateway's namespace
// that carry it.
const GatewayNameLabel = "gateway.networking.k8s.io/gateway-name"

// Provisioner does for each Gateway of a controller what an operator's
// deployment of tlsplane does: one real Envoy of the Gateway's fleet
// (node cluster "<namespace>/<name>", listeners over ADS), here in a
// network namespace of its own, and a LoadBalancer Service labelled with
// the Gateway's name (and carrying spec.infrastructure's labels and
// annotations) whose ingress is that namespace's addresses: those of
// spec.addresses it can use (IPs of the network's static range that no
// other host holds), one of its pool per IPAddress request without a
// value, or one of its pool when nothing is requested.
type Provisioner struct {
	Controller gwv1.GatewayController
	EnvoyBin   string
	XDSAddress string // tlsplane's ADS, reachable from the bridge
	client     kubernetes.Interface
	gw         gwclient.Interface
	net        *Network
	logDir     string
	t          testing.TB

	queue    workqueue.TypedRateLimitingInterface[string]
	gateways cache.Indexer
	classes  cache.Indexer

	mu     sync.Mutex
	envoys map[string]*gatewayEnvoy
}

type gatewayEnvoy struct {
	uid   string
	addrs addressRequest
	host  *Host
	proc  *harness.Process
}

// StartProvisioner starts the loop; it stops with ctx.
func StartProvisioner(ctx context.Context, t testing.TB, c kubernetes.Interface, gw gwclient.Interface, n *Network,
	controller gwv1.GatewayController, envoyBin, xdsAddress, logDir string) (*Provisioner, error) {
	p := &Provisioner{
		Controller: controller, EnvoyBin: envoyBin, XDSAddress: xdsAddress,
		client: c, gw: gw, net: n, logDir: logDir, t: t,
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		envoys: map[string]*gatewayEnvoy{},
	}
	factory := gwinformers.NewSharedInformerFactory(gw, 0)
	gwInf := factory.Gateway().V1().Gateways().Informer()
	classInf := factory.Gateway().V1().GatewayClasses().Informer()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			p.queue.Add(key)
		}
	}
	if _, err := gwInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		return nil, err
	}
	// A class that becomes ours later brings its Gateways along.
	if _, err := classInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) {
			for _, key := range p.gateways.ListKeys() {
				p.queue.Add(key)
			}
		},
	}); err != nil {
		return nil, err
	}
	p.gateways, p.classes = gwInf.GetIndexer(), classInf.GetIndexer()
	factory.Start(ctx.Done())
	go func() { <-ctx.Done(); p.queue.ShutDown() }()
	go func() {
		for {
			key, quit := p.queue.Get()
			if quit {
				return
			}
			if err := p.sync(ctx, key); err != nil && ctx.Err() == nil {
				t.Logf("gateway provisioner: Gateway %s: %v (retrying)", key, err)
				p.queue.AddRateLimited(key)
			} else {
				p.queue.Forget(key)
			}
			p.queue.Done(key)
		}
	}()
	return p, nil
}

func (p *Provisioner) ours(gw *gwv1.Gateway) bool {
	obj, ok, _ := p.classes.GetByKey(string(gw.Spec.GatewayClassName))
	return ok && obj.(*gwv1.GatewayClass).Spec.ControllerName == p.Controller
}

func (p *Provisioner) sync(ctx context.Context, key string) error {
	obj, exists, err := p.gateways.GetByKey(key)
	if err != nil {
		return err
	}
	if !exists || obj.(*gwv1.Gateway).DeletionTimestamp != nil || !p.ours(obj.(*gwv1.Gateway)) {
		// The Service goes with the Gateway (owner reference).
		p.stopEnvoy(key)
		return nil
	}
	gw := obj.(*gwv1.Gateway)
	want := p.requested(key, gw)
	if want.empty() {
		// Nothing it can assign: no Envoy, and a Service without ingress.
		p.stopEnvoy(key)
		return p.ensureService(ctx, gw, nil)
	}
	e, err := p.ensureEnvoy(key, gw, want)
	if err != nil {
		return err
	}
	return p.ensureService(ctx, gw, e.host.IPs)
}

// addressRequest is what the provisioner gives a Gateway: the static
// addresses it asked for and can have, and how many from the pool.
type addressRequest struct {
	static string // comma-separated, in spec order
	pooled int
}

func (r addressRequest) empty() bool { return r.static == "" && r.pooled == 0 }

// requested reads spec.addresses: an IPAddress with a value the network
// can assign (or the Gateway's Envoy holds already) is kept, one without
// a value takes one from the pool; no addresses at all take one from the
// pool. Others (hostnames, unusable IPs) are left out: tlsplane reports
// them, since they are not in the Service's ingress.
func (p *Provisioner) requested(key string, gw *gwv1.Gateway) addressRequest {
	if len(gw.Spec.Addresses) == 0 {
		return addressRequest{pooled: 1}
	}
	p.mu.Lock()
	var held []string
	if e := p.envoys[key]; e != nil && e.uid == string(gw.UID) {
		held = e.host.IPs
	}
	p.mu.Unlock()
	var r addressRequest
	var static []string
	for _, a := range gw.Spec.Addresses {
		if a.Type != nil && *a.Type != gwv1.IPAddressType {
			continue
		}
		switch {
		case a.Value == "":
			r.pooled++
		case slices.Contains(held, a.Value) || p.net.Assignable(a.Value) == nil:
			static = append(static, a.Value)
		default:
			p.t.Logf("gateway provisioner: Gateway %s: spec.addresses %s: %v", key, a.Value, p.net.Assignable(a.Value))
		}
	}
	r.static = strings.Join(static, ",")
	return r
}

func (p *Provisioner) ensureEnvoy(key string, gw *gwv1.Gateway, want addressRequest) (*gatewayEnvoy, error) {
	p.mu.Lock()
	e := p.envoys[key]
	p.mu.Unlock()
	if e != nil && e.uid == string(gw.UID) && e.addrs == want {
		return e, nil
	}
	p.stopEnvoy(key)
	var static []string
	if want.static != "" {
		static = strings.Split(want.static, ",")
	}
	host, err := p.net.AddHostWith("gw"+shortHash(key+string(gw.UID)), static, want.pooled)
	if err != nil {
		return nil, err
	}
	fleet := gw.Namespace + "/" + gw.Name
	const adminPort = 19000 // inside the Gateway's own namespace
	boot, err := harness.Bootstrap(harness.EnvoyOptions{
		NodeID: fleet + "/envoy-0", Fleet: fleet, XDSAddress: p.XDSAddress,
		APIType: "DELTA_GRPC", GatewayListeners: true,
	}, adminPort, 0)
	if err != nil {
		p.net.Remove(host)
		return nil, err
	}
	name := "envoy_" + gw.Namespace + "_" + gw.Name
	path := filepath.Join(p.logDir, name+"-bootstrap.json")
	data, _ := json.MarshalIndent(boot, "", "  ")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		p.net.Remove(host)
		return nil, err
	}
	cmd := host.Command(p.EnvoyBin, "-c", path, "--disable-hot-restart", "--concurrency", "1",
		"-l", "warning", "--drain-time-s", "1", "--base-id", strconv.Itoa(int(time.Now().UnixNano()%1_000_000)))
	e = &gatewayEnvoy{uid: string(gw.UID), addrs: want, host: host, proc: harness.StartCmd(p.t, p.logDir, name, cmd)}
	p.mu.Lock()
	p.envoys[key] = e
	p.mu.Unlock()
	return e, nil
}

func (p *Provisioner) stopEnvoy(key string) {
	p.mu.Lock()
	e := p.envoys[key]
	delete(p.envoys, key)
	p.mu.Unlock()
	if e != nil {
		e.proc.Stop(5 * time.Second)
		p.net.Remove(e.host)
	}
}

// ensureService keeps the Gateway's LoadBalancer Service: its ports are
// the listeners' (a Service needs one; UDP listeners' are UDP ports), its
// labels and annotations spec.infrastructure's (with the gateway-name
// label), its ingress the Envoy's addresses.
func (p *Provisioner) ensureService(ctx context.Context, gw *gwv1.Gateway, ips []string) error {
	var ports []corev1.ServicePort
	for _, l := range gw.Spec.Listeners {
		port, protocol, name := int32(l.Port), corev1.ProtocolTCP, "port-"
		if l.Protocol == gwv1.UDPProtocolType {
			protocol, name = corev1.ProtocolUDP, "udp-"
		}
		if !slices.ContainsFunc(ports, func(sp corev1.ServicePort) bool { return sp.Port == port && sp.Protocol == protocol }) {
			ports = append(ports, corev1.ServicePort{Name: name + strconv.Itoa(int(port)), Port: port, Protocol: protocol, TargetPort: intstr.FromInt32(port)})
		}
	}
	slices.SortFunc(ports, func(a, b corev1.ServicePort) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), strings.Compare(string(a.Protocol), string(b.Protocol)))
	})
	name := "tlsplane-gw-" + shortHash(gw.Name)
	services := p.client.CoreV1().Services(gw.Namespace)
	labels, annotations := infrastructureMetadata(gw)
	svc, err := services.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		svc, err = services.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: gw.Namespace,
				Labels: labels, Annotations: annotations,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(gw, gwv1.SchemeGroupVersion.WithKind("Gateway"))},
			},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports, AllocateLoadBalancerNodePorts: new(false)},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("Service %s/%s: %w", gw.Namespace, name, err)
	}
	if !slices.Equal(portKeys(svc.Spec.Ports), portKeys(ports)) || !maps.Equal(svc.Labels, labels) || !maps.Equal(svc.Annotations, annotations) {
		svc.Spec.Ports, svc.Labels, svc.Annotations = ports, labels, annotations
		if svc, err = services.Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("Service %s/%s: %w", gw.Namespace, name, err)
		}
	}
	var ingress []corev1.LoadBalancerIngress
	for _, ip := range ips {
		ingress = append(ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	if slices.Equal(ingressIPs(svc.Status.LoadBalancer.Ingress), ips) {
		return nil
	}
	svc.Status.LoadBalancer.Ingress = ingress
	_, err = services.UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	return err
}

// infrastructureMetadata are the labels and annotations of what is
// provisioned for the Gateway: spec.infrastructure's, and the
// gateway-name label tlsplane finds the Service by (it wins).
func infrastructureMetadata(gw *gwv1.Gateway) (labels, annotations map[string]string) {
	labels = map[string]string{}
	if inf := gw.Spec.Infrastructure; inf != nil {
		for k, v := range inf.Labels {
			labels[string(k)] = string(v)
		}
		if len(inf.Annotations) > 0 {
			annotations = map[string]string{}
			for k, v := range inf.Annotations {
				annotations[string(k)] = string(v)
			}
		}
	}
	labels[GatewayNameLabel] = gw.Name
	return labels, annotations
}

func ingressIPs(ingress []corev1.LoadBalancerIngress) []string {
	var out []string
	for _, in := range ingress {
		out = append(out, in.IP)
	}
	return out
}

// portKeys are the ports' numbers and protocols, as 53/UDP.
func portKeys(ports []corev1.ServicePort) []string {
	var out []string
	for _, sp := range ports {
		out = append(out, strconv.Itoa(int(sp.Port))+"/"+string(sp.Protocol))
	}
	return out
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:10]
}

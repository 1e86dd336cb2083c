package kubechurn

import (
	"context"
	"fmt"
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// namespaces the Services are spread over.
const namespaces = 10

// world is the benchmark's objects: Service i in namespaceOf(i) named
// svc-i, its CA ConfigMap, its BackendTLSPolicy and one EndpointSlice
// whose second endpoint's address says the slice's generation.
type world struct {
	kube    kubernetes.Interface
	gateway gwclient.Interface
	// config is the clients' configuration, for a watch of the
	// benchmark's own (deliveries).
	config *rest.Config
	n      int
	// gens[i] is the last generation handed out for Service i (owned by
	// the churn's loop).
	gens []int
	// locks[i] guards slices[i], Service i's EndpointSlice as the API
	// server last answered, and final[i], the generation it holds: two
	// updates of one Service overlap only when there are few Services.
	locks  []sync.Mutex
	slices []*discoveryv1.EndpointSlice
	final  []int
	// caPEM is the CA every Service's ConfigMap holds.
	caPEM string
}

func namespaceOf(i int) string { return fmt.Sprintf("churn-%d", i%namespaces) }

func serviceName(i int) string { return fmt.Sprintf("svc-%d", i) }

// clusterName is tlsplane's cluster (and load assignment) of Service i's
// port 443.
func clusterName(i int) string { return namespaceOf(i) + "/" + serviceName(i) + "/443" }

// genAddress is the churned endpoint's address at generation g: distinct
// for every g below 1,000,000, so an arrival names the update it carries.
func genAddress(g int) string {
	return fmt.Sprintf("172.%d.%d.%d", 16+g/62500%16, g/250%250, g%250+1)
}

// addressGen is genAddress's inverse; ok is false for any other address.
func addressGen(addr string) (int, bool) {
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is4() {
		return 0, false
	}
	b := a.As4()
	if b[0] != 172 || b[1] < 16 || b[1] >= 32 || b[2] >= 250 || b[3] == 0 || b[3] > 250 {
		return 0, false
	}
	return int(b[1]-16)*62500 + int(b[2])*250 + int(b[3]) - 1, true
}

// endpointSlice is Service i's slice at generation g: a fixed endpoint and
// the churned one, both ready, on port 8443.
func endpointSlice(i, g int) *discoveryv1.EndpointSlice {
	ready := true
	port, portName := int32(8443), "https"
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespaceOf(i), Name: serviceName(i) + "-x",
			Labels: map[string]string{discoveryv1.LabelServiceName: serviceName(i)}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{fmt.Sprintf("10.%d.%d.1", i/250%250, i%250)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
			{Addresses: []string{genAddress(g)}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}},
		},
	}
}

// create makes the namespaces and, for every Service, its CA ConfigMap,
// Service, BackendTLSPolicy and EndpointSlice at generation 0, with
// workers requests in flight.
func (w *world) create(ctx context.Context, workers int) error {
	for ns := range min(namespaces, w.n) {
		_, err := w.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceOf(ns)}}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create namespace %s: %w", namespaceOf(ns), err)
		}
	}
	w.slices = make([]*discoveryv1.EndpointSlice, w.n)
	w.gens, w.final, w.locks = make([]int, w.n), make([]int, w.n), make([]sync.Mutex, w.n)
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := w.createService(ctx, i, w.caPEM); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var failed error
feed:
	for i := range w.n {
		select {
		case next <- i:
		case failed = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if failed == nil {
		select {
		case failed = <-errs:
		default:
		}
	}
	return failed
}

func (w *world) createService(ctx context.Context, i int, ca string) error {
	ns, name := namespaceOf(i), serviceName(i)
	if _, err := w.kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-ca"}, Data: map[string]string{"ca.crt": ca},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ConfigMap %s/%s-ca: %w", ns, name, err)
	}
	if _, err := w.kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		// Headless: the e2e API server's Service range is a /24, and
		// tlsplane reads endpoints from the slices, not the cluster IP.
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)}}},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Service %s/%s: %w", ns, name, err)
	}
	if _, err := w.gateway.GatewayV1().BackendTLSPolicies(ns).Create(ctx, &gwv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-tls"},
		Spec: gwv1.BackendTLSPolicySpec{
			TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{
				LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Group: "", Kind: "Service", Name: gwv1.ObjectName(name)},
			}},
			Validation: gwv1.BackendTLSPolicyValidation{
				CACertificateRefs: []gwv1.LocalObjectReference{{Group: "", Kind: "ConfigMap", Name: gwv1.ObjectName(name + "-ca")}},
				Hostname:          gwv1.PreciseHostname(name + ".example"),
			},
		},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create BackendTLSPolicy %s/%s-tls: %w", ns, name, err)
	}
	s, err := w.kube.DiscoveryV1().EndpointSlices(ns).Create(ctx, endpointSlice(i, 0), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create EndpointSlice %s/%s-x: %w", ns, name, err)
	}
	w.slices[i] = s
	return nil
}

// update writes Service i's slice at generation g, as the EndpointSlice
// controller does (an Update of the object it last saw), and returns the
// slice's new resourceVersion.
func (w *world) update(ctx context.Context, i, g int) (string, error) {
	w.locks[i].Lock()
	defer w.locks[i].Unlock()
	s := endpointSlice(i, g)
	s.ResourceVersion = w.slices[i].ResourceVersion
	out, err := w.kube.DiscoveryV1().EndpointSlices(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
	if err != nil {
		return "", fmt.Errorf("update EndpointSlice %s/%s to generation %d: %w", s.Namespace, s.Name, g, err)
	}
	w.slices[i], w.final[i] = out, g
	return out.ResourceVersion, nil
}

// finalGenerations are the generations the API server holds, once no
// update is in flight.
func (w *world) finalGenerations() []int {
	out := make([]int, w.n)
	for i := range w.n {
		w.locks[i].Lock()
		out[i] = w.final[i]
		w.locks[i].Unlock()
	}
	return out
}

// policiesWithStatus counts the policies tlsplane has written a status on.
func (w *world) policiesWithStatus(ctx context.Context) (int, error) {
	count := 0
	for ns := range min(namespaces, w.n) {
		list, err := w.gateway.GatewayV1().BackendTLSPolicies(namespaceOf(ns)).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		for _, p := range list.Items {
			if len(p.Status.Ancestors) > 0 {
				count++
			}
		}
	}
	return count, nil
}

package provisioner

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/infrastructure"
)

const controller gwv1.GatewayController = "tlsplane.io/controller"

var testConfig = Config{Image: DefaultImage, XDSAddress: "tlsplane-xds.tlsplane-system.svc:18000", ServiceType: corev1.ServiceTypeLoadBalancer,
	Infrastructure: &infrastructure.Policy{Namespaces: []string{"shop"}, AllowedLabelKeys: []string{"*"}, AllowedAnnotationKeys: []string{"*"}, DeniedKeys: infrastructure.DefaultDeniedKeys}}

// infraGateway has listeners on 80 (HTTP), 443 twice (HTTPS, TLS), 53
// (UDP) and 19000 (where the admin would be), and infrastructure metadata.
func infraGateway() *gwv1.Gateway {
	return &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "edge", UID: types.UID("gw-uid"), Generation: 3},
		Spec: gwv1.GatewaySpec{
			GatewayClassName: "tlsplane",
			Infrastructure: &gwv1.GatewayInfrastructure{
				Labels:      map[gwv1.LabelKey]gwv1.LabelValue{"team": "payments", ManagedByLabel: "someone-else"},
				Annotations: map[gwv1.AnnotationKey]gwv1.AnnotationValue{"example.com/cost-center": "42"},
			},
			Listeners: []gwv1.Listener{
				{Name: "https", Protocol: gwv1.HTTPSProtocolType, Port: 443},
				{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80},
				{Name: "tls", Protocol: gwv1.TLSProtocolType, Port: 443},
				{Name: "dns", Protocol: gwv1.UDPProtocolType, Port: 53},
				{Name: "admin-clash", Protocol: gwv1.TCPProtocolType, Port: 19000},
			},
		},
	}
}

func TestBuildMetadata(t *testing.T) {
	objs, err := Build(infraGateway(), nil, controller, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	if objs.Namespace != "shop" || objs.Name != "tlsplane-edge" {
		t.Fatalf("objects %s/%s, want shop/tlsplane-edge", objs.Namespace, objs.Name)
	}
	wantLabels := map[string]string{"team": "payments", gwv1.GatewayNameLabelKey: "edge", ManagedByLabel: ManagedBy, ComponentLabel: Component}
	for _, o := range []struct {
		kind        string
		labels      map[string]string
		annotations map[string]string
		owners      int
		ns          *string
	}{
		{"ServiceAccount", objs.ServiceAccount.Labels, objs.ServiceAccount.Annotations, len(objs.ServiceAccount.OwnerReferences), objs.ServiceAccount.Namespace},
		{"ConfigMap", objs.ConfigMap.Labels, objs.ConfigMap.Annotations, len(objs.ConfigMap.OwnerReferences), objs.ConfigMap.Namespace},
		{"Deployment", objs.Deployment.Labels, objs.Deployment.Annotations, len(objs.Deployment.OwnerReferences), objs.Deployment.Namespace},
		{"Service", objs.Service.Labels, objs.Service.Annotations, len(objs.Service.OwnerReferences), objs.Service.Namespace},
	} {
		if !maps.Equal(o.labels, wantLabels) {
			t.Errorf("%s labels %v, want %v (ours win over spec.infrastructure's)", o.kind, o.labels, wantLabels)
		}
		if o.annotations["example.com/cost-center"] != "42" || o.annotations[ControllerAnnotation] != string(controller) || o.annotations[AppliedAnnotation] == "" {
			t.Errorf("%s annotations %v: want spec.infrastructure's, %s and %s", o.kind, o.annotations, ControllerAnnotation, AppliedAnnotation)
		}
		if o.owners != 1 || *o.ns != "shop" {
			t.Errorf("%s: %d owner references in namespace %s, want 1 in shop", o.kind, o.owners, *o.ns)
		}
	}
	ref := objs.Service.OwnerReferences[0]
	if *ref.APIVersion != "gateway.networking.k8s.io/v1" || *ref.Kind != "Gateway" || *ref.Name != "edge" || *ref.UID != "gw-uid" || !*ref.Controller || ref.BlockOwnerDeletion != nil {
		t.Errorf("owner reference %+v: want the Gateway edge (uid gw-uid) as controller, without blockOwnerDeletion", ref)
	}
	tmpl := objs.Deployment.Spec.Template
	if !maps.Equal(tmpl.Labels, wantLabels) {
		t.Errorf("Pod template labels %v, want %v", tmpl.Labels, wantLabels)
	}
	if tmpl.Annotations["example.com/cost-center"] != "42" || tmpl.Annotations[BootstrapAnnotation] == "" || tmpl.Annotations[AppliedAnnotation] != "" {
		t.Errorf("Pod template annotations %v: want spec.infrastructure's and the bootstrap hash, not the applied hash", tmpl.Annotations)
	}
	sel := map[string]string{gwv1.GatewayNameLabelKey: "edge", ComponentLabel: Component}
	if !maps.Equal(objs.Deployment.Spec.Selector.MatchLabels, sel) || !maps.Equal(objs.Service.Spec.Selector, sel) {
		t.Errorf("selectors: Deployment %v, Service %v; want %v", objs.Deployment.Spec.Selector.MatchLabels, objs.Service.Spec.Selector, sel)
	}
	if objs.Deployment.Spec.Replicas != nil {
		t.Error("Deployment replicas set: an autoscaler or the operator owns them")
	}
	pod := tmpl.Spec
	if *pod.ServiceAccountName != "tlsplane-edge" || *pod.AutomountServiceAccountToken || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("Pod spec: service account %q, automount %v, runAsNonRoot %v", *pod.ServiceAccountName, *pod.AutomountServiceAccountToken, *pod.SecurityContext.RunAsNonRoot)
	}
	c := pod.Containers[0]
	if *c.Image != DefaultImage || !strings.Contains(strings.Join(c.Args, " "), "--service-node $(POD_NAMESPACE)/$(POD_NAME)") {
		t.Errorf("container image %q args %q", *c.Image, c.Args)
	}
	if c.ReadinessProbe.HTTPGet.Port.IntValue() != 19001 || *c.ReadinessProbe.HTTPGet.Path != "/ready" {
		t.Errorf("readiness probe on port %s path %s, want 19001 /ready", c.ReadinessProbe.HTTPGet.Port.String(), *c.ReadinessProbe.HTTPGet.Path)
	}
	if len(pod.Volumes) != 1 || *pod.Volumes[0].ConfigMap.Name != "tlsplane-edge" {
		t.Errorf("volumes %+v: want only the bootstrap ConfigMap without xDS TLS", pod.Volumes)
	}
}

// Identity-granting keys of spec.infrastructure reach neither the
// ServiceAccount nor the Pod; a Gateway outside --provision-namespaces
// gets nothing.
func TestBuildDropsDeniedKeys(t *testing.T) {
	gw := infraGateway()
	gw.Spec.Infrastructure.Annotations["eks.amazonaws.com/role-arn"] = "arn:aws:iam::1:role/admin"
	gw.Spec.Infrastructure.Annotations["iam.gke.io/gcp-service-account"] = "admin@p.iam.gserviceaccount.com"
	gw.Spec.Infrastructure.Labels["azure.workload.identity/use"] = "true"
	objs, err := Build(gw, nil, controller, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	for what, m := range map[string]map[string]string{
		"ServiceAccount annotations": objs.ServiceAccount.Annotations, "ServiceAccount labels": objs.ServiceAccount.Labels,
		"Pod annotations": objs.Deployment.Spec.Template.Annotations, "Pod labels": objs.Deployment.Spec.Template.Labels,
	} {
		for _, k := range []string{"eks.amazonaws.com/role-arn", "iam.gke.io/gcp-service-account", "azure.workload.identity/use"} {
			if _, ok := m[k]; ok {
				t.Errorf("%s carry %s", what, k)
			}
		}
	}
	if objs.ServiceAccount.Annotations["example.com/cost-center"] != "42" {
		t.Errorf("ServiceAccount annotations %v lack the allowed example.com/cost-center", objs.ServiceAccount.Annotations)
	}
	gw.Namespace = "kube-system"
	if _, err := Build(gw, nil, controller, testConfig); err == nil || !strings.Contains(err.Error(), "--provision-namespaces") {
		t.Errorf("Gateway in kube-system: %v, want refused for --provision-namespaces", err)
	}
}

func TestBuildServicePorts(t *testing.T) {
	objs, err := Build(infraGateway(), nil, controller, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range objs.Service.Spec.Ports {
		got = append(got, *p.Name+"="+string(*p.Protocol)+"/"+p.TargetPort.String())
	}
	want := "udp-53=UDP/53 tcp-80=TCP/80 tcp-443=TCP/443 tcp-19000=TCP/19000"
	if strings.Join(got, " ") != want {
		t.Errorf("Service ports %q, want %q (443 once, UDP for the UDP listener)", strings.Join(got, " "), want)
	}
	if *objs.Service.Spec.Type != corev1.ServiceTypeLoadBalancer {
		t.Errorf("Service type %s", *objs.Service.Spec.Type)
	}
	objs, _ = Build(infraGateway(), []*gwv1.ListenerSet{listenerSet("shop", "more", "edge", 8443), listenerSet("shop", "dup", "edge", 443)}, controller, testConfig)
	got = nil
	for _, p := range objs.Service.Spec.Ports {
		got = append(got, *p.Name)
	}
	if want := "udp-53 tcp-80 tcp-443 tcp-8443 tcp-19000"; strings.Join(got, " ") != want {
		t.Errorf("with ListenerSets: Service ports %q, want %q", strings.Join(got, " "), want)
	}
	cfg := testConfig
	cfg.ServiceType = corev1.ServiceTypeNodePort
	objs, _ = Build(infraGateway(), nil, controller, cfg)
	if *objs.Service.Spec.Type != corev1.ServiceTypeNodePort {
		t.Errorf("Service type %s, want NodePort", *objs.Service.Spec.Type)
	}
}

// bootstrapOf decodes the ConfigMap's bootstrap.
func bootstrapOf(t *testing.T, objs *Objects) map[string]any {
	t.Helper()
	var boot map[string]any
	if err := json.Unmarshal([]byte(objs.ConfigMap.Data[bootstrapKey]), &boot); err != nil {
		t.Fatal(err)
	}
	return boot
}

func TestBuildBootstrap(t *testing.T) {
	objs, err := Build(infraGateway(), nil, controller, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	text := objs.ConfigMap.Data[bootstrapKey]
	boot := bootstrapOf(t, objs)
	if node := boot["node"].(map[string]any); node["cluster"] != "shop/edge" || node["id"] != nil {
		t.Errorf("node %v: want cluster shop/edge and the id from --service-node", node)
	}
	admin := boot["admin"].(map[string]any)["address"].(map[string]any)["socket_address"].(map[string]any)
	if admin["address"] != "127.0.0.1" || admin["port_value"] != float64(19002) {
		t.Errorf("admin on %v: want 127.0.0.1:19002 (19000 is a listener's, 19001 the readiness port)", admin)
	}
	ads := boot["dynamic_resources"].(map[string]any)["ads_config"].(map[string]any)
	if ads["api_type"] != "DELTA_GRPC" {
		t.Errorf("ADS api_type %v", ads["api_type"])
	}
	for _, want := range []string{`"address": "tlsplane-xds.tlsplane-system.svc"`, `"port_value": 18000`, `"lds_config"`, `"cds_config"`, `"port_value": 19001`} {
		if !strings.Contains(text, want) {
			t.Errorf("bootstrap lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "transport_socket") {
		t.Error("plaintext xDS configured, but the bootstrap has a transport socket")
	}
}

func TestBuildXDSClientSecret(t *testing.T) {
	cfg := testConfig
	cfg.XDSClientSecret = GatewayPlaceholder + "-xds-client"
	objs, err := Build(infraGateway(), nil, controller, cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := objs.ConfigMap.Data[bootstrapKey]
	for _, want := range []string{`"sni": "tlsplane-xds.tlsplane-system.svc"`, xdsTLSDir + "/tls.crt", xdsTLSDir + "/tls.key", xdsTLSDir + "/ca.crt", `"san_type": "DNS"`} {
		if !strings.Contains(text, want) {
			t.Errorf("bootstrap lacks %s", want)
		}
	}
	pod := objs.Deployment.Spec.Template.Spec
	if len(pod.Volumes) != 2 || *pod.Volumes[1].Secret.SecretName != "edge-xds-client" {
		t.Fatalf("volumes %+v: want the Secret edge-xds-client", pod.Volumes)
	}
	if m := pod.Containers[0].VolumeMounts[1]; *m.MountPath != xdsTLSDir || !*m.ReadOnly {
		t.Errorf("Secret mounted at %s", *m.MountPath)
	}

	cfg.XDSAddress = "10.0.0.7:18000"
	objs, _ = Build(infraGateway(), nil, controller, cfg)
	text = objs.ConfigMap.Data[bootstrapKey]
	if strings.Contains(text, `"sni"`) || !strings.Contains(text, `"san_type": "IP_ADDRESS"`) {
		t.Errorf("an IP xDS address: want no SNI and an IP SAN:\n%s", text)
	}
}

func TestBuildNames(t *testing.T) {
	gw := infraGateway()
	gw.Name = "edge.example"
	objs, err := Build(gw, nil, controller, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(objs.Name, "tlsplane-edge-example-") || len(objs.Name) > 63 {
		t.Errorf("name %q: want a DNS-1035 label from tlsplane-edge-example-", objs.Name)
	}
	if objs.Service.Labels[gwv1.GatewayNameLabelKey] != "edge.example" {
		t.Errorf("gateway-name label %q", objs.Service.Labels[gwv1.GatewayNameLabelKey])
	}
	gw.Name = strings.Repeat("a", 64)
	if _, err := Build(gw, nil, controller, testConfig); err == nil || !strings.Contains(err.Error(), "gateway-name") {
		t.Errorf("a 64-character name: %v, want a refusal naming the label", err)
	}
}

// An edit of anything provisioned changes its applied hash; the same
// Gateway gives the same hashes.
func TestBuildAppliedHash(t *testing.T) {
	a, _ := Build(infraGateway(), nil, controller, testConfig)
	b, _ := Build(infraGateway(), nil, controller, testConfig)
	if a.Deployment.Annotations[AppliedAnnotation] != b.Deployment.Annotations[AppliedAnnotation] {
		t.Fatal("the same Gateway built twice gives different hashes")
	}
	gw := infraGateway()
	gw.Spec.Infrastructure.Labels["team"] = "checkout"
	c, _ := Build(gw, nil, controller, testConfig)
	for kind, pair := range map[string][2]map[string]string{
		"ServiceAccount": {a.ServiceAccount.Annotations, c.ServiceAccount.Annotations},
		"ConfigMap":      {a.ConfigMap.Annotations, c.ConfigMap.Annotations},
		"Deployment":     {a.Deployment.Annotations, c.Deployment.Annotations},
		"Service":        {a.Service.Annotations, c.Service.Annotations},
	} {
		if pair[0][AppliedAnnotation] == pair[1][AppliedAnnotation] {
			t.Errorf("%s: a label change kept the applied hash", kind)
		}
	}
}

func TestConfigCheck(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{testConfig, ""},
		{Config{Image: "e", XDSAddress: "tlsplane", ServiceType: "LoadBalancer"}, "--gateway-xds-address"},
		{Config{Image: "e", XDSAddress: "t:1", ServiceType: "ExternalName"}, "--gateway-service-type"},
		{Config{Image: "", XDSAddress: "t:1", ServiceType: "ClusterIP"}, "--gateway-envoy-image"},
		{Config{Image: "e", XDSAddress: "t:1", ServiceType: "ClusterIP", XDSClientSecret: "ns/secret"}, "--gateway-xds-client-secret"},
		{Config{Image: "e", XDSAddress: "t:1", ServiceType: "ClusterIP"}, "--provision-namespaces: empty"},
		{Config{Image: "e", XDSAddress: "t:1", ServiceType: "ClusterIP", Infrastructure: &infrastructure.Policy{Namespaces: []string{"Shop/"}}}, "--provision-namespaces: \"Shop/\""},
	} {
		err := c.cfg.Check()
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

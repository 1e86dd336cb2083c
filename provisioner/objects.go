package provisioner

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// envoyUID runs Envoy unprivileged: the official image's envoy user.
const envoyUID = 101

// Objects are what is provisioned for one Gateway, as applied; each
// carries AppliedAnnotation, the hash of the rest of itself.
type Objects struct {
	Namespace, Name string
	ServiceAccount  *corev1ac.ServiceAccountApplyConfiguration
	ConfigMap       *corev1ac.ConfigMapApplyConfiguration
	Deployment      *appsv1ac.DeploymentApplyConfiguration
	Service         *corev1ac.ServiceApplyConfiguration
}

// Build is what Gateway gw should have, provisioned by controller; the
// listeners of its accepted listenerSets are its too.
func Build(gw *gwv1.Gateway, listenerSets []*gwv1.ListenerSet, controller gwv1.GatewayController, cfg Config) (*Objects, error) {
	if err := checkName(gw); err != nil {
		return nil, err
	}
	if cfg.Infrastructure == nil || !cfg.Infrastructure.Provisions(gw.Namespace) {
		return nil, fmt.Errorf("Gateway %s/%s: namespace %s is not one of --provision-namespaces: not provisioned", gw.Namespace, gw.Name, gw.Namespace)
	}
	ns, name := gw.Namespace, ObjectName(gw.Name)
	infra := cfg.Infrastructure.Judge(gw)
	labels, annotations := labelsFor(gw, infra), annotationsFor(infra, controller)
	ports := listenerPorts(gw, listenerSets)
	envoy := portsFor(ports)
	boot, err := bootstrap(gw.Namespace+"/"+gw.Name, cfg, envoy)
	if err != nil {
		return nil, fmt.Errorf("Gateway %s/%s: bootstrap: %w", gw.Namespace, gw.Name, err)
	}
	o := &Objects{Namespace: ns, Name: name}

	o.ServiceAccount = corev1ac.ServiceAccount(name, ns).
		WithLabels(labels).WithAnnotations(annotations).WithOwnerReferences(ownerReference(gw)).
		WithAutomountServiceAccountToken(false) // Envoy never calls the API server
	o.ConfigMap = corev1ac.ConfigMap(name, ns).
		WithLabels(labels).WithAnnotations(annotations).WithOwnerReferences(ownerReference(gw)).
		WithData(map[string]string{bootstrapKey: string(boot)})

	podAnnotations := annotationsFor(infra, "")
	podAnnotations[BootstrapAnnotation] = shortHash(string(boot))
	o.Deployment = appsv1ac.Deployment(name, ns).
		WithLabels(labels).WithAnnotations(annotations).WithOwnerReferences(ownerReference(gw)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithSelector(metav1acSelector(selector(gw))).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(labels).WithAnnotations(podAnnotations).
				// The ServiceAccount is always the one made above, never
				// another: the admission policy of deploy/ refuses others.
				WithSpec(podSpec(name, cfg.clientSecret(gw.Name), cfg, envoy))))

	svcPorts := make([]*corev1ac.ServicePortApplyConfiguration, len(ports))
	for i, sp := range ports {
		svcPorts[i] = sp.apply()
	}
	o.Service = corev1ac.Service(name, ns).
		WithLabels(labels).WithAnnotations(annotations).WithOwnerReferences(ownerReference(gw)).
		WithSpec(corev1ac.ServiceSpec().WithType(cfg.ServiceType).WithSelector(selector(gw)).WithPorts(svcPorts...))

	if err := stampApplied(o); err != nil {
		return nil, fmt.Errorf("Gateway %s/%s: %w", gw.Namespace, gw.Name, err)
	}
	return o, nil
}

// podSpec runs Envoy unprivileged with the bootstrap, and the xDS client
// Secret when secret is set; listener ports below 1024 bind through the
// Pod's own net.ipv4.ip_unprivileged_port_start (a safe sysctl).
func podSpec(name, secret string, cfg Config, ports envoyPorts) *corev1ac.PodSpecApplyConfiguration {
	mounts := []*corev1ac.VolumeMountApplyConfiguration{
		corev1ac.VolumeMount().WithName("bootstrap").WithMountPath(bootstrapDir).WithReadOnly(true),
	}
	volumes := []*corev1ac.VolumeApplyConfiguration{
		corev1ac.Volume().WithName("bootstrap").WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(name)),
	}
	if secret != "" {
		mounts = append(mounts, corev1ac.VolumeMount().WithName("xds-tls").WithMountPath(xdsTLSDir).WithReadOnly(true))
		volumes = append(volumes, corev1ac.Volume().WithName("xds-tls").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(secret)))
	}
	fieldEnv := func(env, path string) *corev1ac.EnvVarApplyConfiguration {
		return corev1ac.EnvVar().WithName(env).WithValueFrom(corev1ac.EnvVarSource().WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath(path)))
	}
	envoy := corev1ac.Container().WithName("envoy").WithImage(cfg.Image).
		WithCommand("envoy").
		WithArgs("-c", bootstrapDir+"/"+bootstrapKey,
			// The node id: unique per Pod, and says which Pod it is.
			"--service-node", "$(POD_NAMESPACE)/$(POD_NAME)",
			"--disable-hot-restart", "--log-level", "info").
		WithEnv(fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace")).
		WithVolumeMounts(mounts...).
		WithReadinessProbe(corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/ready").WithPort(intstr.FromInt32(ports.Ready))).
			WithPeriodSeconds(5).WithFailureThreshold(2)).
		WithSecurityContext(corev1ac.SecurityContext().
			WithAllowPrivilegeEscalation(false).
			WithCapabilities(corev1ac.Capabilities().WithDrop(corev1.Capability("ALL"))))
	return corev1ac.PodSpec().
		WithServiceAccountName(name).WithAutomountServiceAccountToken(false).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).WithRunAsUser(envoyUID).WithRunAsGroup(envoyUID).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault)).
			WithSysctls(corev1ac.Sysctl().WithName("net.ipv4.ip_unprivileged_port_start").WithValue("0"))).
		WithContainers(envoy).
		WithVolumes(volumes...)
}

// stampApplied sets AppliedAnnotation on each object: the hash of its
// JSON without it (the apply configurations marshal deterministically).
func stampApplied(o *Objects) error {
	for _, obj := range []struct {
		v           any
		annotations map[string]string
	}{
		{o.ServiceAccount, o.ServiceAccount.Annotations},
		{o.ConfigMap, o.ConfigMap.Annotations},
		{o.Deployment, o.Deployment.Annotations},
		{o.Service, o.Service.Annotations},
	} {
		data, err := json.Marshal(obj.v)
		if err != nil {
			return err
		}
		obj.annotations[AppliedAnnotation] = shortHash(string(data))
	}
	return nil
}

package inject

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The names injection gives; a Pod holding any of these containers is
// injected already.
const (
	CaptureContainer   = "tlsplane-mesh-capture"
	BootstrapContainer = "tlsplane-mesh-bootstrap"
	SidecarContainer   = "tlsplane-mesh-sidecar"
	// Volume is the emptyDir the bootstrap step writes and Envoy reads.
	Volume = "tlsplane-mesh"
	// IdentityVolume holds the workload certificate (Config.IdentityCSIDriver).
	IdentityVolume = "tlsplane-mesh-identity"
)

// identityDir is where IdentityVolume is mounted in the sidecar.
const identityDir = "/var/run/tlsplane/identity"

// bootstrapDir is where Volume is mounted; BootstrapFile is Envoy's -c.
const (
	bootstrapDir  = "/etc/tlsplane/mesh"
	BootstrapFile = bootstrapDir + "/envoy.yaml"
)

// initContainers are the three steps, in the order they must run: the
// capture programs the network namespace, the bootstrap is written with
// the Pod's identity from the downward API, then the sidecar starts
// (restartPolicy Always: a native sidecar, up before every later init
// container and the application, stopped after them).
func initContainers(c Config, exclude []uint16) []corev1.Container {
	captureArgs := []string{"capture", "--sidecar-uid", strconv.FormatInt(c.SidecarUID, 10), "--port", strconv.Itoa(c.CapturePort)}
	if len(exclude) > 0 {
		captureArgs = append(captureArgs, "--exclude-ports", joinPorts(exclude))
	}
	always := corev1.ContainerRestartPolicyAlways
	mount := []corev1.VolumeMount{{Name: Volume, MountPath: bootstrapDir}}
	bootArgs := []string{"sidecar-bootstrap", "--xds-address", c.XDSAddress,
		"--capture-port", strconv.Itoa(c.CapturePort), "--admin-port", strconv.Itoa(c.AdminPort), "-o", BootstrapFile}
	sidecarMounts := []corev1.VolumeMount{{Name: Volume, MountPath: bootstrapDir, ReadOnly: true}}
	if c.IdentityCSIDriver != "" {
		// Paths only: Envoy reads the files, and again when they rotate.
		bootArgs = append(bootArgs, "--xds-tls-cert", identityDir+"/tls.crt", "--xds-tls-key", identityDir+"/tls.key", "--xds-tls-ca", identityDir+"/ca.crt")
		sidecarMounts = append(sidecarMounts, corev1.VolumeMount{Name: IdentityVolume, MountPath: identityDir, ReadOnly: true})
	}
	return []corev1.Container{
		{
			Name: CaptureContainer, Image: c.TLSPlaneImage, Args: captureArgs,
			// nftables needs root with NET_ADMIN in the Pod's network
			// namespace; nothing else.
			SecurityContext: &corev1.SecurityContext{
				RunAsUser: new(int64(0)), RunAsNonRoot: new(false),
				AllowPrivilegeEscalation: new(false), ReadOnlyRootFilesystem: new(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_ADMIN"}},
			},
		},
		{
			Name: BootstrapContainer, Image: c.TLSPlaneImage,
			Args:            bootArgs,
			Env:             downwardIdentity(),
			VolumeMounts:    mount,
			SecurityContext: sidecarSecurity(c),
		},
		{
			Name: SidecarContainer, Image: c.SidecarImage, RestartPolicy: &always,
			Command:         []string{"envoy"},
			Args:            []string{"-c", BootstrapFile},
			Env:             downwardIdentity(),
			VolumeMounts:    sidecarMounts,
			SecurityContext: sidecarSecurity(c),
		},
	}
}

// downwardIdentity is what sidecar-bootstrap's flags default to.
func downwardIdentity() []corev1.EnvVar {
	field := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
	}
	return []corev1.EnvVar{
		field("POD_NAME", "metadata.name"),
		field("POD_NAMESPACE", "metadata.namespace"),
		field("POD_SERVICE_ACCOUNT", "spec.serviceAccountName"),
	}
}

// sidecarSecurity runs a step as the sidecar's UID, the one the capture
// lets through, with no privilege.
func sidecarSecurity(c Config) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser: new(c.SidecarUID), RunAsGroup: new(c.SidecarUID), RunAsNonRoot: new(true),
		AllowPrivilegeEscalation: new(false), ReadOnlyRootFilesystem: new(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// volumes are the bootstrap's, one small file in memory, and with
// IdentityCSIDriver the workload certificate's.
func volumes(c Config) []corev1.Volume {
	limit := resource.MustParse("1Mi")
	v := []corev1.Volume{{Name: Volume, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}}}
	if c.IdentityCSIDriver != "" {
		v = append(v, corev1.Volume{Name: IdentityVolume, VolumeSource: corev1.VolumeSource{
			CSI: &corev1.CSIVolumeSource{Driver: c.IdentityCSIDriver, ReadOnly: new(true)}}})
	}
	return v
}

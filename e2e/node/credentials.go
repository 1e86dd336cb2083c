package node

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// runAs is the user and group a container's process runs as: the
// container's securityContext over the Pod's, nil for the agent's own
// (root), as an image without USER runs.
func runAs(pod *corev1.Pod, c corev1.Container) (uid, gid *int64) {
	if p := pod.Spec.SecurityContext; p != nil {
		uid, gid = p.RunAsUser, p.RunAsGroup
	}
	if s := c.SecurityContext; s != nil {
		if s.RunAsUser != nil {
			uid = s.RunAsUser
		}
		if s.RunAsGroup != nil {
			gid = s.RunAsGroup
		}
	}
	return uid, gid
}

// asUser is argv run as uid and gid. Host.Command enters the namespace
// with ip netns exec, which needs root, so the credentials cannot be the
// exec's own (SysProcAttr.Credential would apply to ip): setpriv, run
// inside the namespace, drops to them just before argv. Without a gid the
// group is 0, what a runtime gives a user its image does not list.
func asUser(argv []string, uid, gid *int64) []string {
	if uid == nil && gid == nil {
		return argv
	}
	group := int64(0)
	if gid != nil {
		group = *gid
	}
	prefix := []string{"setpriv", "--clear-groups", "--regid=" + strconv.FormatInt(group, 10)}
	if uid != nil {
		prefix = append(prefix, "--reuid="+strconv.FormatInt(*uid, 10))
	}
	return append(append(prefix, "--"), argv...)
}

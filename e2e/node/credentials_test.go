package node

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestRunAs: the container's securityContext over the Pod's, and the
// process really runs with those ids in a Host (needs root and setpriv).
func TestRunAs(t *testing.T) {
	id := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name      string
		ctr       *corev1.SecurityContext
		podSC     *corev1.PodSecurityContext
		want      string // id -u, id -g
		wantArgv0 string
	}{
		{name: "none: the agent's root", want: "0 0", wantArgv0: "id"},
		{name: "the Pod's", podSC: &corev1.PodSecurityContext{RunAsUser: id(1000), RunAsGroup: id(2000)}, want: "1000 2000", wantArgv0: "setpriv"},
		{name: "the container's over the Pod's", podSC: &corev1.PodSecurityContext{RunAsUser: id(1000), RunAsGroup: id(2000)},
			ctr: &corev1.SecurityContext{RunAsUser: id(1337), RunAsGroup: id(1337)}, want: "1337 1337", wantArgv0: "setpriv"},
		{name: "a user without a group: group 0", ctr: &corev1.SecurityContext{RunAsUser: id(1337)}, want: "1337 0", wantArgv0: "setpriv"},
		{name: "root asked for explicitly", ctr: &corev1.SecurityContext{RunAsUser: id(0)}, want: "0 0", wantArgv0: "setpriv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: tc.podSC}}
			uid, gid := runAs(pod, corev1.Container{SecurityContext: tc.ctr})
			argv := asUser([]string{"id"}, uid, gid)
			if argv[0] != tc.wantArgv0 {
				t.Fatalf("argv %v, want it to start with %s", argv, tc.wantArgv0)
			}
			if os.Geteuid() != 0 {
				t.Skip("needs root to change user")
			}
			if _, err := exec.LookPath("setpriv"); err != nil {
				t.Skip("needs setpriv")
			}
			var got []string
			for _, flag := range []string{"-u", "-g"} {
				a := append(append([]string{}, argv[:len(argv)-1]...), "id", flag)
				out, err := exec.Command(a[0], a[1:]...).CombinedOutput()
				if err != nil {
					t.Fatalf("%v: %v\n%s", a, err, out)
				}
				got = append(got, strings.TrimSpace(string(out)))
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("ran as %v, want %s", got, tc.want)
			}
		})
	}
}

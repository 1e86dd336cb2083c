package node

import "testing"

func TestRepositoryDropsTagAndDigest(t *testing.T) {
	for image, want := range map[string]string{
		"registry.k8s.io/gateway-api/echo-basic:v1.5.1":       "registry.k8s.io/gateway-api/echo-basic",
		"registry.k8s.io/coredns/coredns@sha256:abcd":         "registry.k8s.io/coredns/coredns",
		"registry.k8s.io/coredns/coredns:v1.12.2@sha256:abcd": "registry.k8s.io/coredns/coredns",
		"localhost:5000/echo":                                 "localhost:5000/echo",
		"localhost:5000/echo:dev":                             "localhost:5000/echo",
		"registry.k8s.io/gateway-api/echo-basic":              "registry.k8s.io/gateway-api/echo-basic",
	} {
		if got := repository(image); got != want {
			t.Errorf("repository(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestMountsRewritePathsUnderTheLongestMount(t *testing.T) {
	m := mounts{"/etc/secret-volume": "/agent/vol/secret", "/etc": "/agent/vol/etc", "/root": "/agent/vol/conf"}
	for value, want := range map[string]string{
		"/etc/secret-volume/crt": "/agent/vol/secret/crt",
		"/etc/secret-volume":     "/agent/vol/secret",
		"/etc/hosts":             "/agent/vol/etc/hosts",
		"/etc-other/x":           "/etc-other/x",
		"/root/Corefile":         "/agent/vol/conf/Corefile",
		"-conf":                  "-conf",
		"3000":                   "3000",
	} {
		if got := m.rewrite(value); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", value, got, want)
		}
	}
}

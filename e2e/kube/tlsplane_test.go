package kube

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// controlPlane is one `tlsplane serve` process in Kubernetes mode.
type controlPlane struct {
	*harness.TLSPlane
	name string
	xds  string // 127.0.0.1:PORT
}

// startTLSPlane runs the tlsplane binary against the test API server with
// kubeconfig and extra flags, and waits until it serves a first snapshot.
// It is stopped (SIGTERM) at the end of the test; its log is shown on failure.
func startTLSPlane(t *testing.T, name, kubeconfig string, flags ...string) *controlPlane {
	t.Helper()
	p := harness.StartTLSPlane(t, harness.TLSPlaneOptions{
		Bin: tlsplaneBin, LogDir: t.TempDir(), Name: name,
		Args:         append([]string{"--kubeconfig", kubeconfig, "--log-level", "debug"}, flags...),
		Env:          []string{"POD_NAME=" + name},
		ReadyTimeout: 60 * time.Second,
	})
	showLogOnFailure(t, p.Process, 20*time.Second, 6000)
	return &controlPlane{TLSPlane: p, name: name, xds: p.XDSAddress()}
}

// stop sends sig (SIGTERM: graceful, SIGKILL: a crash) and waits.
func (cp *controlPlane) stop(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		cp.Kill()
		return
	}
	cp.Stop(20 * time.Second)
}

// get is the body of a 200 answer from the admin listener; any other
// answer is an error with its body.
func (cp *controlPlane) get(path string) ([]byte, error) {
	body, err := harness.HTTPGet(cp.AdminURL(path))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w: %s", path, err, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// served is what /debug/snapshot shows for one node.
type served struct {
	clusterVersion, secretVersion string
	clusters                      []string
	// caBundles maps an SDS secret name to its trusted CA PEM.
	caBundles map[string]string
}

func (cp *controlPlane) snapshot(t *testing.T) served {
	t.Helper()
	body, err := cp.get("/debug/snapshot?node=e2e")
	if err != nil {
		t.Fatalf("%s: %v", cp.name, err)
	}
	s, err := parseSnapshot(body)
	if err != nil {
		t.Fatalf("%s: /debug/snapshot: %v\n%s", cp.name, err, tail(string(body), 2000))
	}
	return s
}

// parseSnapshot reads the config dump (protojson of admin.v3.ConfigDump).
func parseSnapshot(body []byte) (served, error) {
	var dump struct {
		Configs []struct {
			Type                  string `json:"@type"`
			VersionInfo           string `json:"versionInfo"`
			DynamicActiveClusters []struct {
				Cluster struct {
					Name string `json:"name"`
				} `json:"cluster"`
			} `json:"dynamicActiveClusters"`
			DynamicActiveSecrets []struct {
				Name        string `json:"name"`
				VersionInfo string `json:"versionInfo"`
				Secret      struct {
					ValidationContext struct {
						TrustedCA struct {
							InlineString string `json:"inlineString"`
							InlineBytes  string `json:"inlineBytes"`
						} `json:"trustedCa"`
					} `json:"validationContext"`
				} `json:"secret"`
			} `json:"dynamicActiveSecrets"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(body, &dump); err != nil {
		return served{}, err
	}
	s := served{caBundles: map[string]string{}}
	for _, c := range dump.Configs {
		switch {
		case strings.HasSuffix(c.Type, "ClustersConfigDump"):
			s.clusterVersion = c.VersionInfo
			for _, dc := range c.DynamicActiveClusters {
				s.clusters = append(s.clusters, dc.Cluster.Name)
			}
		case strings.HasSuffix(c.Type, "SecretsConfigDump"):
			for _, sec := range c.DynamicActiveSecrets {
				s.secretVersion = sec.VersionInfo
				ca := sec.Secret.ValidationContext.TrustedCA
				pem := ca.InlineString
				if ca.InlineBytes != "" {
					b, err := base64.StdEncoding.DecodeString(ca.InlineBytes)
					if err != nil {
						return served{}, fmt.Errorf("secret %s: trustedCa: %w", sec.Name, err)
					}
					pem = string(b)
				}
				s.caBundles[sec.Name] = pem
			}
		}
	}
	return s, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

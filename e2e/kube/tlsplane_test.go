package kube

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// controlPlane is one `tlsplane serve` process in Kubernetes mode.
type controlPlane struct {
	name  string
	admin string // http://127.0.0.1:PORT
	xds   string // 127.0.0.1:PORT
	cmd   *exec.Cmd
	log   string
	done  chan struct{}
}

// startTLSPlane runs the tlsplane binary against the test API server with
// kubeconfig and extra flags, and waits until it serves a first snapshot.
// It is stopped (SIGTERM) at the end of the test; its log is shown on failure.
func startTLSPlane(t *testing.T, name, kubeconfig string, flags ...string) *controlPlane {
	t.Helper()
	ports := freePorts(t, 2)
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"serve",
		"--kubeconfig", kubeconfig,
		"--xds-address", fmt.Sprintf("127.0.0.1:%d", ports[0]),
		"--admin-address", fmt.Sprintf("127.0.0.1:%d", ports[1]),
		"--log-level", "debug",
	}, flags...)
	cmd := exec.Command(tlsplaneBin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "POD_NAME="+name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", tlsplaneBin, err)
	}
	cp := &controlPlane{name: name, admin: fmt.Sprintf("http://127.0.0.1:%d", ports[1]), xds: fmt.Sprintf("127.0.0.1:%d", ports[0]), cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logFile.Close(); close(cp.done) }()
	t.Cleanup(func() {
		cp.stop(syscall.SIGTERM)
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("log of %s:\n%s", name, tail(string(data), 6000))
		}
	})
	eventually(t, 60*time.Second, name+" /readyz", func() error {
		select {
		case <-cp.done:
			data, _ := os.ReadFile(logPath)
			t.Fatalf("%s exited before ready:\n%s", name, tail(string(data), 4000))
		default:
		}
		_, err := cp.get("/readyz")
		return err
	})
	return cp
}

// stop sends sig (SIGTERM: graceful, SIGKILL: a crash) and waits.
func (cp *controlPlane) stop(sig syscall.Signal) {
	select {
	case <-cp.done:
		return
	default:
	}
	_ = cp.cmd.Process.Signal(sig)
	select {
	case <-cp.done:
	case <-time.After(20 * time.Second):
		_ = cp.cmd.Process.Kill()
		<-cp.done
	}
}

func (cp *controlPlane) get(path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cp.admin+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
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

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

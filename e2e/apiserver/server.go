package apiserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Server is a running etcd + kube-apiserver pair.
type Server struct {
	// Dir holds certificates, logs and kubeconfigs; removed by Stop.
	Dir string
	// Kubeconfig is the path of an admin (system:masters) kubeconfig.
	Kubeconfig string
	// Config is the admin rest.Config.
	Config *rest.Config
	// URL is the API server's https address.
	URL string
	// CAPEM verifies the API server's serving certificate.
	CAPEM []byte
	// Ready is how long it took from start until /readyz and the CRDs.
	Ready time.Duration

	etcd, apiserver *process
	pki             *pki
}

// BinDir is where hack/build-kube-apiserver.sh puts kube-apiserver and etcd,
// unless KUBE_APISERVER_BIN_DIR says otherwise.
func BinDir() string {
	if dir := os.Getenv("KUBE_APISERVER_BIN_DIR"); dir != "" {
		return dir
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", ".cache", "bin")
}

// Options are how Start's API server differs from the suites' default.
type Options struct {
	// PriorityAndFairness turns on the API server's priority and fairness
	// (APF) with its default FlowSchemas and priority levels. Off by
	// default: the suites' admin client is exempt from it anyway, and a
	// suite's own load should not queue behind it.
	PriorityAndFairness bool
	// Channel, when set, is the release channel whose CRDs (the pinned
	// module's) the API server gets instead of GATEWAY_API_CHANNEL's: a
	// test comparing both channels needs one server per channel.
	Channel string
}

// Start runs etcd and kube-apiserver on loopback, waits until the API server
// is ready, installs the Gateway API CRDs (of GATEWAY_API_CHANNEL) and the
// experimental XBackend and XBackendTrafficPolicy CRDs and waits until they
// are established. On error everything started is stopped again.
func Start(ctx context.Context) (*Server, error) { return StartWith(ctx, Options{}) }

// StartWith is Start with opts.
func StartWith(ctx context.Context, opts Options) (_ *Server, err error) {
	began := time.Now()
	bin := BinDir()
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return nil, fmt.Errorf("%s not built (run make kube-apiserver): %w", name, err)
		}
	}
	dir, err := os.MkdirTemp("", "tlsplane-apiserver-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()

	p, err := newPKI(dir)
	if err != nil {
		return nil, err
	}
	s.CAPEM, s.pki = p.caPEM, p
	kubeletFlags, err := p.kubeletClientFiles(dir)
	if err != nil {
		return nil, err
	}
	token := randomToken()
	tokens := filepath.Join(dir, "tokens.csv")
	// The static admin identity; RBAC lets system:masters do anything.
	if err := os.WriteFile(tokens, []byte(token+",admin,admin-uid,system:masters\n"), 0o600); err != nil {
		return nil, err
	}

	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	s.etcd, err = startProcess("etcd", filepath.Join(bin, "etcd"), filepath.Join(dir, "etcd.log"),
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-url", etcdURL,
		"--listen-peer-url", "http://127.0.0.1:"+strconv.Itoa(ports[1]))
	if err != nil {
		return nil, err
	}

	s.URL = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	s.apiserver, err = startProcess("kube-apiserver", filepath.Join(bin, "kube-apiserver"), filepath.Join(dir, "kube-apiserver.log"), append(kubeletFlags,
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(ports[2]),
		"--tls-cert-file", p.servingCert,
		"--tls-private-key-file", p.servingKey,
		"--token-auth-file", tokens,
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", p.saPublic,
		"--service-account-signing-key-file", p.saPrivate,
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--enable-priority-and-fairness="+strconv.FormatBool(opts.PriorityAndFairness),
		"--profiling=false",
		"--cert-dir", filepath.Join(dir, "certs"),
	)...)
	if err != nil {
		return nil, err
	}

	s.Config = &rest.Config{
		Host:            s.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM},
		QPS:             200,
		Burst:           400,
	}
	if err := s.waitReady(ctx, 120*time.Second); err != nil {
		return nil, err
	}
	s.Kubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := s.WriteKubeconfig(s.Kubeconfig, "admin", token); err != nil {
		return nil, err
	}
	if err := s.installCRDs(ctx, opts.Channel); err != nil {
		return nil, err
	}
	s.Ready = time.Since(began)
	return s, nil
}

// installCRDs installs channel's CRDs, or GATEWAY_API_CHANNEL's when channel
// is empty.
func (s *Server) installCRDs(ctx context.Context, channel string) error {
	if channel == "" {
		return InstallGatewayAPICRDs(ctx, s.Config)
	}
	dir, err := crdDirOf(channel)
	if err != nil {
		return err
	}
	return installCRDDir(ctx, s.Config, dir)
}

// waitReady polls /readyz until it answers ok, a process dies, or timeout.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	client, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		for _, p := range []*process{s.etcd, s.apiserver} {
			if done, perr := p.exited(); done {
				return fmt.Errorf("%s exited (%v) before the API server was ready; log tail:\n%s", p.name, perr, p.tail())
			}
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("kube-apiserver %s not ready after %s (last error: %v); log tail:\n%s", s.URL, timeout, last, s.apiserver.tail())
}

// Stop ends kube-apiserver, then etcd, and removes Dir unless
// KEEP_APISERVER_DIR is set (to read the logs after a failure).
func (s *Server) Stop() {
	if s.apiserver != nil {
		s.apiserver.stop(15 * time.Second)
	}
	if s.etcd != nil {
		s.etcd.stop(10 * time.Second)
	}
	if os.Getenv("KEEP_APISERVER_DIR") == "" {
		os.RemoveAll(s.Dir)
	}
}

// PIDs are kube-apiserver's and etcd's process ids, for measuring what
// they cost (/proc/PID/stat).
func (s *Server) PIDs() (apiserver, etcd int) {
	return s.apiserver.cmd.Process.Pid, s.etcd.cmd.Process.Pid
}

// LogTail is the end of kube-apiserver's log, for failure messages.
func (s *Server) LogTail() string { return s.apiserver.tail() }

// freePorts reserves n distinct loopback ports and releases them for the
// servers to bind right away.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

package echoserver

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/gateway-api/conformance/utils/echo"
)

// TestParse: the original's flags and defaults, with the mesh manifests'
// own command lines.
func TestParse(t *testing.T) {
	// conformance/mesh/manifests.yaml, the echo-v1 and echo-v2 Deployments.
	manifests := []string{"--tcp=9090", "--port=8080", "--grpc=7070", "--port=8443", "--tls=8443", "--crt=/cert.crt", "--key=/cert.key"}
	for _, tc := range []struct {
		name  string
		args  []string
		env   map[string]string
		ports []Port
		check func(*Config) string
		err   string
		usage bool
	}{
		{name: "the mesh manifests' echo Deployments", args: manifests, ports: []Port{
			{Name: "http-0", Protocol: HTTP, Port: 8080}, {Name: "http-1", Protocol: HTTP, Port: 8443, TLS: true},
			{Name: "grpc-0", Protocol: GRPC, Port: 7070}, {Name: "tcp-0", Protocol: TCP, Port: 9090}},
			check: func(c *Config) string {
				if c.CertFile != "/cert.crt" || c.KeyFile != "/cert.key" || c.Version != "" {
					return "crt/key/version " + c.CertFile + " " + c.KeyFile + " " + c.Version
				}
				return ""
			}},
		{name: "no args (the consumer namespace's echo-v1): the defaults", ports: []Port{
			{Name: "http-0", Protocol: HTTP, Port: 8080}, {Name: "grpc-0", Protocol: GRPC, Port: 7070}, {Name: "tcp-0", Protocol: TCP, Port: 9090}}},
		{name: "comma-separated, version, cluster, localhost", args: []string{"--port=80,81", "--bind-localhost=81", "--version=v2", "--cluster=c1", "--istio-version=1.21"},
			ports: []Port{{Name: "http-0", Protocol: HTTP, Port: 80}, {Name: "http-1", Protocol: HTTP, Port: 81, ListenIP: "127.0.0.1"},
				{Name: "grpc-0", Protocol: GRPC, Port: 7070}, {Name: "tcp-0", Protocol: TCP, Port: 9090}},
			check: func(c *Config) string {
				if c.Version != "v2" || c.Cluster != "c1" || c.IstioVersion != "1.21" {
					return "version/cluster/istio-version " + c.Version + " " + c.Cluster + " " + c.IstioVersion
				}
				return ""
			}},
		{name: "--bind-ip from INSTANCE_IP, server-first", args: []string{"--tcp=9000", "--bind-ip=9000", "--server-first=9000"}, env: map[string]string{"INSTANCE_IP": "10.1.2.3"},
			ports: []Port{{Name: "http-0", Protocol: HTTP, Port: 8080}, {Name: "grpc-0", Protocol: GRPC, Port: 7070},
				{Name: "tcp-0", Protocol: TCP, Port: 9000, ServerFirst: true, ListenIP: "10.1.2.3"}}},
		{name: "a port cannot be emptied (pflag, as the original)", args: []string{"--grpc="}, usage: true, err: `invalid argument "" for "--grpc" flag`},
		{name: "--bind-ip without INSTANCE_IP", args: []string{"--bind-ip=8080"}, err: "--bind-ip set but INSTANCE_IP undefined"},
		{name: "a flag not implemented", args: []string{"--udp=5353"}, usage: true, err: "flag --udp of the echo-advanced server is not implemented"},
		{name: "--metrics not implemented", args: []string{"--metrics=15014"}, usage: true, err: "flag --metrics of the echo-advanced server is not implemented"},
		{name: "an unknown flag", args: []string{"--nope"}, usage: true, err: "unknown flag: --nope"},
		{name: "a port out of range", args: []string{"--grpc=70000"}, usage: true, err: "--grpc: port 70000 is out of range"},
		{name: "an argument", args: []string{"serve"}, usage: true, err: `unknown command "serve"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("INSTANCE_IP", "")
			os.Unsetenv("INSTANCE_IP")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, _, err := parse(tc.args, io.Discard)
			if tc.err != "" {
				_, isUsage := err.(usageError)
				if err == nil || !strings.Contains(err.Error(), tc.err) || isUsage != tc.usage {
					t.Fatalf("error %v (usage %v), want one with %q (usage %v)", err, isUsage, tc.err, tc.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Ports, tc.ports) {
				t.Errorf("ports\n %+v\nwant\n %+v", c.Ports, tc.ports)
			}
			if tc.check != nil {
				if msg := tc.check(c); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

// TestHostnameFromEnvironment: HOSTNAME (the Pod's name, which the node
// agent sets) over the machine's host name.
func TestHostnameFromEnvironment(t *testing.T) {
	t.Setenv("HOSTNAME", "echo-v1-abc")
	if h := hostname(); h != "echo-v1-abc" {
		t.Fatalf("hostname %q, want HOSTNAME's", h)
	}
	t.Setenv("HOSTNAME", "")
	if h, _ := os.Hostname(); hostname() != h {
		t.Fatalf("hostname %q without HOSTNAME, want os.Hostname() %q", hostname(), h)
	}
}

// TestCertificate: the image's own pair is made when absent; any other
// missing file fails the start naming it; a given pair is used.
func TestCertificate(t *testing.T) {
	if _, err := os.Stat(imageCertFile); err == nil {
		t.Fatalf("%s exists on this machine: the test of its absence cannot run", imageCertFile)
	}
	cert, err := loadCertificate(imageCertFile, imageKeyFile, "echo-v1-abc")
	if err != nil || len(cert.Certificate) != 1 {
		t.Fatalf("the image's absent pair: %v", err)
	}
	dir := t.TempDir()
	missing := filepath.Join(dir, "cert.crt")
	_, err = Start(Config{Ports: []Port{{Name: "http-0", Protocol: HTTP, TLS: true, ListenIP: "127.0.0.1"}}, CertFile: missing, KeyFile: filepath.Join(dir, "cert.key")}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `could not load TLS keys --crt "`+missing+`"`) {
		t.Fatalf("start with a missing --crt: %v, want an error naming it", err)
	}
}

// TestMainExitCodes: a bad command line exits as the original (-1, so
// 255) with cobra's "Error: ..." on stderr; --help exits 0.
func TestMainExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{args: []string{"--hbone=15008"}, code: 255, stderr: "Error: flag --hbone of the echo-advanced server is not implemented by the e2e node agent's\n"},
		{args: []string{"--help"}, code: 0, stdout: "--tls ints"},
		{args: []string{"--port=8080", "--tls=8080", "--crt=/nonexistent/x.crt", "--key=/nonexistent/x.key"}, code: 255, stdout: `could not load TLS keys --crt "/nonexistent/x.crt"`},
	} {
		var out, errOut bytes.Buffer
		code := Main(tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) {
			t.Errorf("%v: exit %d stdout %q stderr %q; want exit %d, stdout with %q, stderr with %q", tc.args, code, out.String(), errOut.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}

// TestParserReadsFieldsAsWritten: every field line the server writes is
// read by the suite's parser into the field of that name.
func TestParserReadsFieldsAsWritten(t *testing.T) {
	var b bytes.Buffer
	writeField(&b, fieldServiceVersion, "v9")
	writeField(&b, fieldServicePort, "8080")
	writeField(&b, fieldHost, "echo")
	writeField(&b, fieldURL, "/p")
	writeField(&b, fieldCluster, "c")
	writeField(&b, fieldMethod, "PUT")
	writeField(&b, fieldProto, "HTTP/1.1")
	writeField(&b, fieldIP, "10.0.0.1")
	writeField(&b, fieldAlpn, "h2")
	writeKeyValue(&b, fieldRequestHeader, "X-A", "1")
	writeField(&b, fieldStatusCode, "418")
	writeField(&b, fieldHostname, "pod-a")
	r := echo.ParseResponse(b.String())
	got := []string{r.Version, r.Port, r.Host, r.URL, r.Cluster, r.Method, r.Protocol, r.IP, r.Alpn, r.RequestHeaders.Get("X-A"), r.Code, r.Hostname}
	want := []string{"v9", "8080", "echo", "/p", "c", "PUT", "HTTP/1.1", "10.0.0.1", "h2", "1", "418", "pod-a"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed %q, want %q", got, want)
	}
}

package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DNS is a real CoreDNS on loopback answering A and AAAA records the test
// sets: its hosts plugin serves a hosts file that SetRecords rewrites and
// CoreDNS re-reads every DNSReload. Names it does not know get SERVFAIL
// (the hosts plugin's answer for an unknown name without fallthrough):
// nothing is forwarded anywhere.
type DNS struct {
	*Process
	// Addr is 127.0.0.1:PORT, served over UDP and TCP.
	Addr  string
	hosts string
}

// DNSRecords map a hostname to its addresses, IPv4 (A) or IPv6 (AAAA).
type DNSRecords map[string][]string

const (
	// DNSTTL is the TTL of every answer, in seconds: the hosts plugin's
	// smallest, so a resolver that respects it asks again within a second.
	DNSTTL = 1
	// DNSReload is how often CoreDNS checks the hosts file for a change
	// (its modification time and size).
	DNSReload = 100 * time.Millisecond
)

// StartDNS starts CoreDNS on a free loopback port serving records, and
// waits until it answers over UDP and TCP. Its Corefile, hosts file and
// log go to logDir.
func StartDNS(t testing.TB, logDir string, records DNSRecords) *DNS {
	t.Helper()
	bin := CoreDNSBin(t)
	port := FreeUDPAndTCPPort(t)
	d := &DNS{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), hosts: filepath.Join(logDir, "coredns.hosts")}
	d.SetRecords(t, records)
	corefile := filepath.Join(logDir, "Corefile")
	// bind: loopback only. log: every query in the log, for reading what
	// Envoy asked. no_reverse: the test's names only.
	conf := fmt.Sprintf(`.:%d {
	bind 127.0.0.1
	errors
	log
	hosts %s {
		ttl %d
		reload %s
		no_reverse
	}
}
`, port, d.hosts, DNSTTL, DNSReload)
	if err := os.WriteFile(corefile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	d.Process = Start(t, logDir, "coredns", bin, "-conf", corefile)
	WaitProbe(t, d.Process, 15*time.Second, func() error {
		conn, err := net.DialTimeout("tcp", d.Addr, time.Second)
		if err != nil {
			return err
		}
		conn.Close()
		for name, want := range records {
			if err := d.answers(name, want); err != nil {
				return err
			}
		}
		return nil
	})
	return d
}

// SetRecords replaces every record, in one rename of the hosts file;
// CoreDNS answers with them within DNSReload (WaitAnswer waits for it).
func (d *DNS) SetRecords(t testing.TB, records DNSRecords) {
	t.Helper()
	var lines []string
	for name, addrs := range records {
		for _, a := range addrs {
			if net.ParseIP(a) == nil {
				t.Fatalf("DNS record %s: %q is not an IP address", name, a)
			}
			lines = append(lines, a+" "+name)
		}
	}
	slices.Sort(lines)
	WriteAtomic(t, d.hosts, []byte(strings.Join(lines, "\n")+"\n"))
}

// Lookup asks this server, and only it, for name's addresses (A and AAAA),
// sorted.
func (d *DNS) Lookup(ctx context.Context, name string) ([]string, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, network, d.Addr)
	}}
	addrs, err := r.LookupHost(ctx, name)
	slices.Sort(addrs)
	return addrs, err
}

// WaitAnswer waits until the server answers name with exactly want (after
// a SetRecords, CoreDNS reloads within DNSReload).
func (d *DNS) WaitAnswer(t testing.TB, name string, want ...string) {
	t.Helper()
	if err := Eventually(10*time.Second, 50*time.Millisecond, func() error { return d.answers(name, want) }); err != nil {
		t.Fatalf("CoreDNS at %s: %v\n--- coredns log:\n%s", d.Addr, err, d.LogTail(20))
	}
}

func (d *DNS) answers(name string, want []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	got, err := d.Lookup(ctx, name)
	if err != nil {
		return err
	}
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s answers %v, want %v", name, got, want)
	}
	return nil
}

// FreeUDPAndTCPPort is a loopback port free for both UDP and TCP, as a DNS
// server needs both.
func FreeUDPAndTCPPort(t testing.TB) int {
	t.Helper()
	for range 20 {
		port := FreePort(t)
		pc, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			pc.Close()
			return port
		}
	}
	t.Fatal("no loopback port free for both UDP and TCP in 20 tries")
	return 0
}

// CoreDNSBin is the CoreDNS the suites run: $COREDNS_BIN, else coredns in
// $CONFORMANCE_IMAGES_DIR or e2e/.cache/bin/images (make coredns). Missing, or built before
// it had the plugins StartDNS configures, it ends the test (Prerequisite).
func CoreDNSBin(t testing.TB) string {
	t.Helper()
	bin, err := CoreDNSBinary()
	Prerequisite(t, "missing prerequisite", err)
	return bin
}

// CoreDNSBinary is CoreDNSBin as an error.
func CoreDNSBinary() (string, error) {
	bin, err := corednsProgram.find()
	if err != nil {
		return "", err
	}
	out, err := exec.Command(bin, "-plugins").Output()
	if err != nil {
		return "", fmt.Errorf("CoreDNS %s -plugins: %w", bin, err)
	}
	plugins := strings.Fields(string(out))
	for _, p := range []string{"bind", "hosts"} {
		if !slices.Contains(plugins, p) {
			return "", fmt.Errorf("CoreDNS %s has no %s plugin: it was built from an older e2e/cmd/coredns (%s)", bin, p, corednsProgram.how)
		}
	}
	return bin, nil
}

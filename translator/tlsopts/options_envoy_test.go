package tlsopts

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// envoyValidateConcurrency bounds the Envoy processes run at once: the test
// machines have 2 cores shared with other work.
const envoyValidateConcurrency = 2

// envoyCase is one option value put to both Parse and Envoy.
type envoyCase struct {
	key, value string
	// spellings, when set, are checked one by one with Parse and
	// together in one Envoy run (Envoy rejects a list if it rejects any
	// member), which keeps the test's time down.
	spellings []string
	// tlsplane: whether Parse accepts the value; envoy: whether
	// Envoy 1.40 accepts it. They differ only for the other spellings
	// tlsplane points away from (aliases, IANA names, groups not offered).
	tlsplane, envoy bool
}

// TestEnvoyAcceptsOptionNames keeps option validation honest: every profile,
// cipher, curve and signature algorithm Parse accepts makes Envoy 1.40
// (`--mode validate`) accept a cluster using it, as Parse renders it;
// a sample of names Parse rejects is rejected by Envoy too; and every
// alias Parse answers with "spelled X here" is one Envoy knows.
func TestEnvoyAcceptsOptionNames(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Envoy 1.40 about 130 times; skipped with -short")
	}
	envoy := translatortest.EnvoyBinary(t)
	cases := envoyCases()
	start := time.Now()
	results := make([]error, len(cases))
	sem := make(chan struct{}, envoyValidateConcurrency)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = checkWithEnvoy(envoy, t.TempDir(), c)
		}()
	}
	wg.Wait()
	t.Logf("%d cases against %s in %v (%d at a time)", len(cases), envoy, time.Since(start).Round(time.Millisecond), envoyValidateConcurrency)
	for i, err := range results {
		if err != nil {
			t.Errorf("%s=%s: %v", cases[i].key, quoteValue(cases[i].value), err)
		}
	}
}

func envoyCases() []envoyCase {
	var cases []envoyCase
	add := func(key string, tlsplane, envoy bool, values ...string) {
		for _, v := range values {
			cases = append(cases, envoyCase{key: key, value: v, tlsplane: tlsplane, envoy: envoy})
		}
	}
	var ciphers, iana, curves, sigalgs []string
	for _, c := range cipherSuites {
		ciphers = append(ciphers, c.name)
		iana = append(iana, c.ianaName)
	}
	for _, c := range ecdhCurves {
		curves = append(curves, c.name)
	}
	for _, a := range signatureAlgorithms {
		sigalgs = append(sigalgs, a.name)
	}
	single := func(a signatureAlgorithm) string {
		if !a.tls12 && !a.tls13 {
			return a.name + ",ed25519" // not accepted alone: it cannot verify a backend
		}
		return a.name
	}

	// Everything the tables accept, one at a time and all together.
	add(optCiphers, true, true, ciphers...)
	add(optCiphers, true, true, strings.Join(ciphers, ","),
		"[ECDHE-ECDSA-AES128-GCM-SHA256 | ECDHE-ECDSA-CHACHA20-POLY1305],ECDHE-RSA-AES128-GCM-SHA256")
	add(optECDHCurves, true, true, curves...)
	add(optECDHCurves, true, true, strings.Join(curves, ","))
	for _, a := range signatureAlgorithms {
		add(optSignatureAlgorithms, true, true, single(a))
	}
	add(optSignatureAlgorithms, true, true, strings.Join(sigalgs, ","))
	add(optVerifyCertificateHashes, true, true, "# pins\n"+strings.ToLower(pinA)+"\n"+pinAColon[:len(pinAColon)-2]+"1b")
	// Each profile as a whole: its versions, ciphers, curves and
	// signature algorithms together in one cluster.
	add(optProfile, true, true, ProfileNames()...)

	// A sample of what both refuse.
	add(optCiphers, false, false, append(append([]string{}, tls13Suites...),
		"AES128-SHA256", "AES256-SHA256", "ECDHE-RSA-AES256-SHA384", "ECDHE-ECDSA-AES256-SHA384",
		"RC4-SHA", "NULL-SHA", "DHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-DES-CBC3-SHA", "ECDHE-RSA-AES128-CCM",
		"ecdhe-rsa-aes128-gcm-sha256", "!aNULL", "-ALL", "[AES128-SHA|FOO]", "[AES128-SHA|[AES256-SHA]]", "AES128-SHA:FOO")...)
	add(optECDHCurves, false, false, "X25519,X25519", "P-224", "X448", "X25519Kyber768Draft00", "MLKEM768", "secp256r1", "p-256", "ffdhe2048")
	add(optSignatureAlgorithms, false, false, "ed25519,ed25519", "rsa_pss_pss_sha256", "rsa_pss_pss_sha384", "rsa_pss_pss_sha512",
		"rsa_pkcs1_md5_sha1", "ed448", "Ed25519", "ecdsa_sha256", "rsa_pkcs1_sha224", "mldsa")

	// Spellings Envoy knows that tlsplane turns away with a pointer to the
	// canonical name: the pointer must not claim a name Envoy lacks.
	spellings := func(key string, canonical map[string]string) {
		for _, names := range withoutRepeats(canonical) {
			cases = append(cases, envoyCase{key: key, value: strings.Join(names, ","), spellings: names, envoy: true})
		}
	}
	ianaNames := map[string]string{}
	for _, c := range cipherSuites {
		ianaNames[c.ianaName] = c.name
	}
	spellings(optCiphers, ianaNames)
	curveNames := maps.Clone(curveAliases)
	for _, name := range curvesNotOffered {
		curveNames[name] = name
	}
	spellings(optECDHCurves, curveNames)
	spellings(optSignatureAlgorithms, sigalgAliases)
	return cases
}

// withoutRepeats splits the spellings into sorted lists in which no two
// name the same thing: Envoy rejects a curve or signature algorithm listed
// twice, under any spelling.
func withoutRepeats(canonical map[string]string) [][]string {
	var lists [][]string
	var used []map[string]bool
	for _, name := range slices.Sorted(maps.Keys(canonical)) {
		i := 0
		for i < len(lists) && used[i][canonical[name]] {
			i++
		}
		if i == len(lists) {
			lists, used = append(lists, nil), append(used, map[string]bool{})
		}
		lists[i], used[i][canonical[name]] = append(lists[i], name), true
	}
	return lists
}

// checkWithEnvoy puts c to Parse and to Envoy and reports where
// either disagrees with what the case expects.
func checkWithEnvoy(envoy, dir string, c envoyCase) error {
	for _, name := range c.spellings {
		if _, err := Parse(map[gwv1.AnnotationKey]gwv1.AnnotationValue{gwv1.AnnotationKey(c.key): gwv1.AnnotationValue(name)}, false); err == nil {
			return errors.New("Parse accepts " + name)
		}
	}
	parsed, err := Parse(map[gwv1.AnnotationKey]gwv1.AnnotationValue{gwv1.AnnotationKey(c.key): gwv1.AnnotationValue(c.value)}, false)
	if c.tlsplane && err != nil {
		return errors.New("Parse rejects it: " + err.Error())
	}
	if !c.tlsplane && err == nil {
		return errors.New("Parse accepts it")
	}
	if err != nil {
		// What a user would get if tlsplane passed the value through.
		parsed = defaultTLSOptions()
		raw := strings.Split(c.value, ",")
		if c.spellings != nil {
			raw = c.spellings
		}
		switch c.key {
		case optCiphers:
			parsed.Ciphers = raw
		case optECDHCurves:
			parsed.ECDHCurves = raw
		case optSignatureAlgorithms:
			parsed.SignatureAlgorithms = raw
		}
	}
	out, err := envoyValidate(envoy, dir, parsed)
	switch {
	case c.envoy && err != nil:
		return errors.New("Envoy rejects it: " + err.Error() + ": " + lastOutputLine(out))
	case !c.envoy && err == nil:
		return errors.New("Envoy accepts it")
	case !c.envoy && !strings.Contains(out, "Failed to initialize") && !strings.Contains(out, "Invalid hex-encoded"):
		// Guards against a bootstrap Envoy refuses for another reason.
		return errors.New("Envoy rejects it, but not for the TLS parameter: " + lastOutputLine(out))
	}
	return nil
}

// envoyValidate runs `envoy --mode validate` on a bootstrap with one cluster
// whose upstream TLS carries o's parameters where the emitter puts them
// (tls_params, alpn_protocols; translator/envoy's golden tests pin that
// mapping). Without a CA secret it has no validation context, since an SDS
// reference would need an ADS server; certificate hashes, which live
// there, are put in an inline one.
func envoyValidate(envoy, dir string, o Options) (string, error) {
	tls := &tlsv3.UpstreamTlsContext{Sni: "probe.example", CommonTlsContext: &tlsv3.CommonTlsContext{
		TlsParams: &tlsv3.TlsParameters{
			TlsMinimumProtocolVersion: o.MinimumVersion,
			TlsMaximumProtocolVersion: o.MaximumVersion,
			CipherSuites:              o.Ciphers,
			EcdhCurves:                o.ECDHCurves,
			SignatureAlgorithms:       o.SignatureAlgorithms,
		},
		AlpnProtocols: o.ALPNProtocols,
	}}
	if o.CertificateHashes != nil {
		tls.CommonTlsContext.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContext{
			ValidationContext: &tlsv3.CertificateValidationContext{VerifyCertificateHash: o.CertificateHashes},
		}
	}
	typed, err := anypb.New(tls)
	if err != nil {
		return "", err
	}
	cluster := &clusterv3.Cluster{
		Name:                 "probe",
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(time.Second),
		LoadAssignment: &endpointv3.ClusterLoadAssignment{ClusterName: "probe", Endpoints: []*endpointv3.LocalityLbEndpoints{{
			LbEndpoints: []*endpointv3.LbEndpoint{{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
					Address: "127.0.0.1", PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: 1},
				}}},
			}}}},
		}}},
		TransportSocket: &corev3.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: typed}},
	}
	bootstrap, err := protojson.Marshal(&bootstrapv3.Bootstrap{StaticResources: &bootstrapv3.Bootstrap_StaticResources{Clusters: []*clusterv3.Cluster{cluster}}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(path, bootstrap, 0o600); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, envoy, "--mode", "validate", "--disable-hot-restart", "--log-level", "error", "-c", path).CombinedOutput()
	return string(out), err
}

func lastOutputLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

package plan

import (
	"crypto/sha256"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// What the naming contract promises: distinct inputs, of one kind or of
// two, never yield one name where names share a namespace (names.go).
// Checked over adversarial words (the fixed parts and separators the names
// are made of, the longest legal names, every legal character), over
// random strings, and by FuzzNamesInjective.

// nameInput is what a name is made of; each kind reads the parts it takes.
type nameInput struct {
	a, b, c     string
	port        int32
	rule, match int
}

// named is one name, the namespace it is unique in, and what it stands
// for (its kind and the parts it read: equal for equal inputs only).
type named struct{ space, what, name string }

const (
	spaceOrigins  = "clusters, load assignments and secrets"
	spaceListener = "listeners"
	spaceTable    = "route configurations"
	spaceChain    = "filter chains of a listener"
	spaceRoute    = "routes of a virtual host"
	spaceFleet    = "fleets"
)

// caRef is a CA or revocation list reference, as a set member.
type caRef struct{ namespace, group, kind, name string }

func (r caRef) what() string { return what("ref", r.namespace, r.group, r.kind, r.name) }

func (r caRef) key() string { return CARef(r.namespace, r.group, r.kind, r.name) }

// caSet is the name and the canonical description of a set of refs.
func caSet(refs ...caRef) (name, what string) {
	keys := make([]string, 0, len(refs))
	whats := make([]string, 0, len(refs))
	for _, r := range refs {
		keys = append(keys, r.key())
		whats = append(whats, r.what())
	}
	slices.Sort(whats)
	return CASecretName(keys), "ca" + strings.Join(slices.Compact(whats), "")
}

// what is a kind and its parts, told apart: strings quoted, numbers as
// they are.
func what(kind string, parts ...any) string {
	var b strings.Builder
	b.WriteString(kind)
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			b.WriteString(" " + strconv.Quote(p))
		case int32:
			b.WriteString(" " + strconv.Itoa(int(p)))
		case int:
			b.WriteString(" " + strconv.Itoa(p))
		default:
			panic(fmt.Sprintf("%T", p))
		}
	}
	return b.String()
}

// namesOf is every kind of name made of in.
func namesOf(in nameInput) []named {
	a, b, c, port := in.a, in.b, in.c, in.port
	w := what
	out := []named{
		{spaceOrigins, w("cluster", a, b, port), ClusterName(a, b, port)},
		{spaceOrigins, w("grpc cluster", a, b, port), GRPCClusterName(a, b, port)},
		{spaceOrigins, w("raw cluster", a, b, port), RawClusterName(a, b, port)},
		{spaceOrigins, w("udp cluster", a, b, port), UDPClusterName(a, b, port)},
		{spaceOrigins, w("xbackend cluster", a, b, port), XBackendClusterName(a, b, port)},
		{spaceOrigins, w("xbackend grpc cluster", a, b, port), XBackendGRPCClusterName(a, b, port)},
		{spaceOrigins, w("xbackend raw cluster", a, b, port), RawOf(XBackendClusterName(a, b, port))},
		{spaceOrigins, w("listener certificate", a, b), CertificateSecretName(a, b)},
		{spaceOrigins, w("client certificate", a, b), ClientCertificateSecretName(a, b)},
		{spaceOrigins, w("gateway client certificate", a, b), GatewayClientCertificateSecretName(a, b)},
		{spaceOrigins, w("frontend ca", a, b, c), FrontendCASecretName(a, b, c)},
		{spaceOrigins, w("system ca"), SystemCASecretName},
		{spaceOrigins, w("invalid backend cluster"), InvalidBackendClusterName},

		{spaceListener, w("listener", a, b, port), ListenerName(a, b, port)},
		{spaceListener, w("udp listener", a, b, port), UDPListenerName(a, b, port)},
		{spaceListener, w("mesh listener", a, b, port), MeshListenerName(a, b, port)},

		{spaceTable, w("http table", a, b, port), ListenerName(a, b, port)},
		{spaceTable, w("mesh table", a, b, port), MeshListenerName(a, b, port)},
		{spaceTable, w("gateway chain table", a, b, port, c), ChainRouteTableName(ListenerName(a, b, port), GatewayChainName(c))},
		{spaceTable, w("set chain table", a, b, port, a, c, b), ChainRouteTableName(ListenerName(a, b, port), ListenerSetChainName(a, c, b))},
		{spaceTable, w("set chain table", b, a, port, c, a, b), ChainRouteTableName(ListenerName(b, a, port), ListenerSetChainName(c, a, b))},

		// A TLS listener's chain for no hostname is the listener's chain.
		{spaceChain, w("gateway chain", a), GatewayChainName(a)},
		{spaceChain, w("set chain", a, b, c), ListenerSetChainName(a, b, c)},
		{spaceChain, w("gateway chain host", a, b), StreamChainName(GatewayChainName(a), b)},
		{spaceChain, w("gateway chain host", c, a), StreamChainName(GatewayChainName(c), a)},
		{spaceChain, w("set chain host", a, b, c, a), StreamChainName(ListenerSetChainName(a, b, c), a)},
		{spaceChain, w("set chain host", c, a, b, c), StreamChainName(ListenerSetChainName(c, a, b), c)},
		{spaceChain, w("unmatched chain"), UnmatchedChainName},

		{spaceRoute, w("http route match", a, b, in.rule, in.match), HTTPRouteMatchName(a, b, in.rule, in.match)},
		{spaceRoute, w("grpc route match", a, b, in.rule, in.match), GRPCRouteMatchName(a, b, in.rule, in.match)},
		{spaceRoute, w("http route match", b, a, in.match, in.rule), HTTPRouteMatchName(b, a, in.match, in.rule)},

		{spaceFleet, w("gateway fleet", a, b), GatewayFleet(a, b)},
		{spaceFleet, w("mesh fleet", a), MeshFleet(a)},
		{spaceFleet, w("mesh fleet", b), MeshFleet(b)},
	}
	// CA bundles (any kind, group and name a policy may write, valid or
	// not), and the same with a revocation list.
	refs := []caRef{{a, "", "ConfigMap", b}, {a, "", "Secret", c}, {a, c, b, c}, {a, "", b, c}, {b, a, c, a}}
	sets := [][]caRef{{refs[0]}, {refs[1]}, {refs[2]}, {refs[3]}, {refs[4]}, {refs[0], refs[1]}, {refs[2], refs[3], refs[4]}, {refs[0], refs[0]}}
	for _, set := range sets {
		name, what := caSet(set...)
		out = append(out, named{spaceOrigins, what, name})
	}
	crls := []caRef{{a, "", "ConfigMap", c}, {b, "", "Secret", a}}
	for _, crl := range crls {
		for _, ca := range []struct{ name, what string }{{SystemCASecretName, "system ca"}, {CASecretName([]string{refs[0].key()}), "ca" + refs[0].what()}} {
			out = append(out, named{spaceOrigins, "crl " + ca.what + " " + crl.what(), CRLSecretName(ca.name, crl.key())})
		}
	}
	return out
}

// nameIndex finds two inputs giving one name in one namespace. It keeps
// hashes of each name and of what it stands for, to stay small, and the
// input and kind that made it, for the message.
type nameIndex struct {
	inputs []nameInput
	seen   map[[16]byte]madeOf
}

type madeOf struct {
	what        [16]byte
	input, kind int32
}

func newNameIndex() *nameIndex { return &nameIndex{seen: map[[16]byte]madeOf{}} }

func hash16(s string) [16]byte {
	h := sha256.Sum256([]byte(s))
	return [16]byte(h[:16])
}

func (x *nameIndex) add(t *testing.T, in nameInput) {
	t.Helper()
	x.inputs = append(x.inputs, in)
	for k, n := range namesOf(in) {
		key, what := hash16(n.space+"\x00"+n.name), hash16(n.what)
		prev, ok := x.seen[key]
		if !ok {
			x.seen[key] = madeOf{what, int32(len(x.inputs) - 1), int32(k)}
			continue
		}
		if prev.what != what {
			other := namesOf(x.inputs[prev.input])[prev.kind]
			t.Fatalf("%s: %q is both %s and %s (%q)", n.space, n.name, other.what, n.what, other.name)
		}
	}
}

// adversarialWords are namespaces and names equal to the names' fixed
// parts, the longest legal names, every legal character, and the
// separators (which legal names never hold, but references may).
func adversarialWords() []string {
	label := strings.Repeat("z", 62) + "9" // 63: a namespace's limit
	subdomain := strings.Repeat(label+".", 3) + strings.Repeat("a", 61)
	if len(subdomain) != 253 {
		panic(len(subdomain))
	}
	return []string{
		"", "a", "client", "certificate", "ca", "system", "gateway-client", "frontend-ca", "default",
		"grpc", "tcp", "udp", "crl", "configmap", "secret", "ConfigMap", "Secret", "rule", "grpcrule", "match",
		"unmatched", "~unmatched", "~misdirected", "1", "443", "65535", "0", "0.9-z", "a.b", "a-b",
		label, subdomain, "*.example.com", "a/b", "a,b", "a:b", "a+crl", "CA/system", "Client/client", "XBackend", "XBackend/a", "CA", "Client", "Certificate", "GatewayClient", "FrontendCA",
		"a%2Fb", "%", "a/b/c/certificate", "mesh", "Mesh", "Mesh/a",
	}
}

func TestNamesInjectiveOverAdversarialWords(t *testing.T) {
	words := adversarialWords()
	thirds := []string{"", "default", "443", "certificate", "a/b", "ConfigMap", "client"}
	ports := []int32{1, 65535}
	if testing.Short() {
		thirds, ports = []string{"", "certificate", "a/b"}, []int32{65535}
	}
	x := newNameIndex()
	for _, a := range words {
		for _, b := range words {
			for _, c := range thirds {
				for _, port := range ports {
					x.add(t, nameInput{a: a, b: b, c: c, port: port, rule: int(port % 2), match: 1})
				}
			}
		}
	}
	t.Logf("%d inputs, %d names", len(x.inputs), len(x.seen))
}

func TestNamesInjectiveOverRandomStrings(t *testing.T) {
	r := rand.New(rand.NewSource(33))
	const alphabet = "ab09.-/,+:~%*CAZ "
	word := func() string {
		b := make([]byte, r.Intn(6))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		return string(b)
	}
	n := 10000
	if testing.Short() {
		n = 5000
	}
	x := newNameIndex()
	for range n {
		x.add(t, nameInput{a: word(), b: word(), c: word(), port: int32(r.Intn(4)), rule: r.Intn(3), match: r.Intn(3)})
	}
	t.Logf("%d inputs, %d names", len(x.inputs), len(x.seen))
}

// The names of legal objects are the ones users and the README know.
func TestNamesOfLegalObjects(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ClusterName("shop", "pay", 443), "shop/pay/443"},
		{GRPCClusterName("shop", "pay", 443), "shop/pay/443/grpc"},
		{RawClusterName("shop", "pay", 443), "shop/pay/443/tcp"},
		{UDPClusterName("shop", "dns", 53), "shop/dns/53/udp"},
		{ListenerName("shop", "edge", 443), "shop/edge/443"},
		{UDPListenerName("shop", "edge", 53), "shop/edge/53/udp"},
		{MeshFleet("shop"), "Mesh/shop"},
		{MeshListenerName("shop", "echo", 80), "Mesh/shop/echo/80"},
		{ChainRouteTableName(ListenerName("shop", "edge", 443), ListenerSetChainName("shop", "extra", "api")), "shop/edge/443/shop/extra/api"},
		{StreamChainName(GatewayChainName("tls"), "*.shop.example"), "tls/*.shop.example"},
		{HTTPRouteMatchName("shop", "pay", 0, 1), "shop/pay/rule/0/match/1"},
		{CertificateSecretName("client", "client"), "Certificate/client/client"},
		{ClientCertificateSecretName("client", "certificate"), "Client/client/certificate"},
		{GatewayClientCertificateSecretName("shop", "edge"), "GatewayClient/shop/edge"},
		{FrontendCASecretName("shop", "edge", "8443"), "FrontendCA/shop/edge/8443"},
		{CASecretName([]string{CARef("shop", "", "Secret", "b"), CARef("shop", "", "ConfigMap", "a")}), "CA/shop/configmap/a,shop/secret/b"},
		{CRLSecretName(SystemCASecretName, CARef("shop", "", "ConfigMap", "crl")), "CA/system+crl/shop/configmap/crl"},
		// What a reference may say and no object is called:
		{CARef("shop", "", "configmap", "a,b"), "shop/configmap./a%2Cb"},
		{CARef("shop", "example.io", "Config.Map", "a"), "shop/%43onfig%2E%4Dap.example.io/a"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
		// Envoy's stats would turn a ':' into '_' (sds.<name>.…).
		if strings.Contains(c.got, ":") {
			t.Errorf("%q holds a ':'", c.got)
		}
	}
}

// FuzzNamesInjective: two inputs that differ never share a name in one
// namespace.
func FuzzNamesInjective(f *testing.F) {
	f.Add("client", "client", "", int32(443), "client", "certificate", "", int32(443))
	f.Add("ca", "system", "", int32(1), "ca", "system", "x", int32(1))
	f.Add("shop", "a,shop/configmap/b", "a", int32(1), "shop", "a", "shop/configmap/b", int32(1))
	f.Add("client", "ns", "", int32(443), "ns", "443", "", int32(443))
	f.Add("x", "y", "unmatched", int32(65535), "~unmatched", "", "", int32(65535))
	f.Fuzz(func(t *testing.T, a1, b1, c1 string, p1 int32, a2, b2, c2 string, p2 int32) {
		in1 := nameInput{a: a1, b: b1, c: c1, port: p1, rule: int(p1 & 3), match: int(p2 & 3)}
		in2 := nameInput{a: a2, b: b2, c: c2, port: p2, rule: int(p2 & 3), match: int(p1 & 3)}
		names1, names2 := namesOf(in1), namesOf(in2)
		for _, n1 := range names1 {
			for _, n2 := range names2 {
				if n1.space == n2.space && n1.name == n2.name && n1.what != n2.what {
					t.Fatalf("%s: %q is both %s and %s", n1.space, n1.name, n1.what, n2.what)
				}
			}
		}
		// Within one input too (kinds of one input's parts).
		x := newNameIndex()
		x.add(t, in1)
	})
}

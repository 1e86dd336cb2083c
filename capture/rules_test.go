package capture

import (
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

var defaults = Config{SidecarUID: DefaultSidecarUID, Port: DefaultPort}

func TestConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"root sidecar", Config{Port: DefaultPort}, "sidecar UID 0"},
		{"no port", Config{SidecarUID: 1337}, "port 0"},
		{"excluded port 0", Config{SidecarUID: 1337, Port: DefaultPort, ExcludePorts: []uint16{0}}, "excluded port 0"},
		{"excluded twice", Config{SidecarUID: 1337, Port: DefaultPort, ExcludePorts: []uint16{22, 22}}, "excluded port 22 given twice"},
		{"excluded capture port", Config{SidecarUID: 1337, Port: DefaultPort, ExcludePorts: []uint16{DefaultPort}}, "is the capture port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Describe(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Describe: %v, want an error containing %q", err, tc.want)
			}
			// Apply checks before it touches the kernel: no connection needed.
			if err := (&Namespace{}).Apply(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Apply: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestRules: the chain in order, and each rule's expressions say what its
// text says (decoded by render, independently of how rules built them).
func TestRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want []string
	}{
		{"defaults", defaults, []string{
			"meta skuid 1337 return",
			"ip daddr 127.0.0.0/8 return",
			"meta l4proto tcp redirect to :15001",
		}},
		{"another UID and port, excluded ports in order", Config{SidecarUID: 2000, Port: 16001, ExcludePorts: []uint16{22, 8443}}, []string{
			"meta skuid 2000 return",
			"ip daddr 127.0.0.0/8 return",
			"tcp dport 22 return",
			"tcp dport 8443 return",
			"meta l4proto tcp redirect to :16001",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Describe(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Describe:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for i, r := range rules(tc.c) {
				if text := render(r.exprs); text != tc.want[i] {
					t.Errorf("rule %d: expressions say %q, want %q", i, text, tc.want[i])
				}
			}
		})
	}
}

// render decodes the expressions rules uses into nft's words; anything
// else is rendered as unknown, so a new expression fails the test.
func render(exprs []expr.Any) string {
	var words []string
	var loaded string // what register 1 holds
	for _, e := range exprs {
		switch e := e.(type) {
		case *expr.Meta:
			loaded = map[expr.MetaKey]string{expr.MetaKeySKUID: "meta skuid", expr.MetaKeyL4PROTO: "meta l4proto"}[e.Key]
		case *expr.Payload:
			switch {
			case e.Base == expr.PayloadBaseNetworkHeader && e.Offset == 16 && e.Len == 4:
				loaded = "ip daddr"
			case e.Base == expr.PayloadBaseTransportHeader && e.Offset == 2 && e.Len == 2:
				loaded = "tcp dport"
			default:
				loaded = fmt.Sprintf("payload %v", e)
			}
		case *expr.Bitwise:
			ones, _ := net.IPMask(e.Mask).Size()
			loaded += fmt.Sprintf("/%d", ones)
		case *expr.Cmp:
			if e.Op != expr.CmpOpEq {
				return "unknown cmp"
			}
			field, mask, _ := strings.Cut(loaded, "/")
			switch field {
			case "meta skuid":
				words = append(words, fmt.Sprintf("%s %d", field, binaryutil.NativeEndian.Uint32(e.Data)))
			case "meta l4proto":
				if len(e.Data) == 1 && e.Data[0] == unix.IPPROTO_TCP {
					// nft folds "meta l4proto tcp" into a following "tcp dport".
					words = append(words, "meta l4proto tcp")
				}
			case "ip daddr":
				words = append(words, fmt.Sprintf("ip daddr %s/%s", net.IP(e.Data), mask))
			case "tcp dport":
				words = slices.DeleteFunc(words, func(w string) bool { return w == "meta l4proto tcp" })
				words = append(words, fmt.Sprintf("tcp dport %d", binary.BigEndian.Uint16(e.Data)))
			default:
				return "unknown field " + loaded
			}
		case *expr.Immediate:
			loaded = fmt.Sprintf(":%d", binary.BigEndian.Uint16(e.Data))
		case *expr.Redir:
			words = append(words, "redirect to "+loaded)
		case *expr.Verdict:
			if e.Kind != expr.VerdictReturn {
				return "unknown verdict"
			}
			words = append(words, "return")
		default:
			return fmt.Sprintf("unknown %T", e)
		}
	}
	return strings.Join(words, " ")
}

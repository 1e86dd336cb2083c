package capture

import (
	"strconv"

	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// rule is one rule of the capture chain: its expressions, and the nft
// text that says the same (Describe, --dry-run, tests).
type rule struct {
	exprs []expr.Any
	text  string
}

// rules are the capture chain in order: the sidecar's own traffic,
// loopback and excluded ports return (stay as they are); every other TCP
// connection is redirected to the capture port, where the sidecar reads
// its original destination (SO_ORIGINAL_DST).
func rules(c Config) []rule {
	out := []rule{{
		text: "meta skuid " + itoa(uint64(c.SidecarUID)) + " return",
		exprs: []expr.Any{
			&expr.Meta{Key: expr.MetaKeySKUID, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(c.SidecarUID)},
			&expr.Verdict{Kind: expr.VerdictReturn},
		},
	}, {
		text: "ip daddr 127.0.0.0/8 return",
		exprs: []expr.Any{
			// The IPv4 header's destination address, offset 16.
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte{255, 0, 0, 0}, Xor: []byte{0, 0, 0, 0}},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{127, 0, 0, 0}},
			&expr.Verdict{Kind: expr.VerdictReturn},
		},
	}}
	for _, p := range c.ExcludePorts {
		out = append(out, rule{
			text: "tcp dport " + itoa(uint64(p)) + " return",
			exprs: append(tcp(),
				// The TCP header's destination port, offset 2.
				&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(p)},
				&expr.Verdict{Kind: expr.VerdictReturn},
			),
		})
	}
	return append(out, rule{
		text: "meta l4proto tcp redirect to :" + itoa(uint64(c.Port)),
		exprs: append(tcp(),
			&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(c.Port)},
			&expr.Redir{RegisterProtoMin: 1},
		),
	})
}

// tcp matches TCP packets: ports mean nothing before it.
func tcp() []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
	}
}

// Describe is the capture chain as nft would print its rules.
func Describe(c Config) ([]string, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rules(c) {
		out = append(out, r.text)
	}
	return out, nil
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

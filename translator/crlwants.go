package translator

import (
	"bytes"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/smallset"
	"github.com/tlsplane/tlsplane/translator/xbackend"
)

// addCRLWants adds wants to the distribution points dst (made on first
// use), each URL's CAs unique and sorted.
func addCRLWants(dst map[string][][]byte, wants []backendtls.CRLWant) map[string][][]byte {
	for _, want := range wants {
		if dst == nil {
			dst = map[string][][]byte{}
		}
		cas := dst[want.URL]
		for _, ca := range want.CAs {
			if i, found := slices.BinarySearchFunc(cas, ca, bytes.Compare); !found {
				cas = slices.Insert(cas, i, ca)
			}
		}
		dst[want.URL] = cas
	}
	return dst
}

// xbackendCRLWants adds the XBackends' distribution points to dst.
func xbackendCRLWants(dst map[string][][]byte, verdicts map[types.NamespacedName]*xbackend.Verdict) map[string][][]byte {
	for _, v := range verdicts {
		dst = addCRLWants(dst, v.FetchedCRLs.Wants)
	}
	return dst
}

// indexCRLWants records (add) or forgets the distribution points policy
// nn's verdict v wants, so that a fetched list judges again exactly the
// policies that read it.
func (w *world) indexCRLWants(nn types.NamespacedName, v *backendtls.Verdict, add bool) {
	for _, want := range v.FetchedCRLs.Wants {
		if add {
			smallset.Add(w.byCRL, want.URL, nn)
		} else {
			smallset.Remove(w.byCRL, want.URL, nn)
		}
	}
}

// crlDistributionPoints are the URLs every current verdict wants.
func (w *world) crlDistributionPoints() map[string][][]byte {
	var out map[string][][]byte
	seen := map[types.NamespacedName]bool{}
	for _, policies := range w.byCRL {
		for nn := range policies.All() {
			if g := w.verdicts[nn]; g != nil && !seen[nn] {
				seen[nn] = true
				out = addCRLWants(out, g.verdict.FetchedCRLs.Wants)
			}
		}
	}
	if w.xbackends != nil {
		out = xbackendCRLWants(out, w.xbackends.verdicts)
	}
	return out
}

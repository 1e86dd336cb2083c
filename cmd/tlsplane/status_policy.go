package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/backendcerts"
	"github.com/tlsplane/tlsplane/handshakes"
	"github.com/tlsplane/tlsplane/pipeline"
)

// policyView is one BackendTLSPolicy as `tlsplane status policy` shows it,
// gathered from /debug/status.
type policyView struct {
	Namespace string                      `json:"namespace"`
	Name      string                      `json:"name"`
	Ancestors []gwv1.PolicyAncestorStatus `json:"ancestors"`
	Clusters  []string                    `json:"clusters"`
	Windows   []handshakes.DebugWindow    `json:"handshakeWindows"`
	// Certificates are the inventory of what its backends presented.
	Certificates []backendcerts.DebugEntry `json:"backendCertificates"`
	Rejected     []pipeline.Rejection      `json:"rejections"`
}

// debugStatusDoc is the part of /debug/status the policy view reads.
type debugStatusDoc struct {
	Policies []struct {
		Namespace string            `json:"namespace"`
		Name      string            `json:"name"`
		Status    gwv1.PolicyStatus `json:"status"`
		Clusters  []string          `json:"clusters"`
	} `json:"policies"`
	Rejections   []pipeline.Rejection      `json:"rejections"`
	Handshakes   []handshakes.DebugWindow  `json:"handshakes"`
	Certificates []backendcerts.DebugEntry `json:"backendCertificates"`
}

// printPolicy prints one policy of /debug/status as a table or as JSON.
func printPolicy(w io.Writer, admin *adminClient, ref, format string) error {
	key, err := parsePolicyRef(ref)
	if err != nil {
		return err
	}
	body, err := admin.get("/debug/status")
	if err != nil {
		return err
	}
	var doc debugStatusDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("admin server %s: /debug/status: %v", admin.base, err)
	}
	view, err := findPolicy(doc, key)
	if err != nil {
		return err
	}
	if format == formatJSON {
		return writeIndentedJSON(w, view)
	}
	_, err = w.Write(policyTable(view))
	return err
}

func parsePolicyRef(ref string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("policy %q: want NAMESPACE/NAME", ref)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// findPolicy gathers key's entry, the handshake windows and backend
// certificates of its clusters and the rejections traced to it; an unknown policy is an error naming
// the policies of its namespace.
func findPolicy(doc debugStatusDoc, key types.NamespacedName) (policyView, error) {
	var sameNamespace []string
	for _, p := range doc.Policies {
		if p.Namespace != key.Namespace {
			continue
		}
		if p.Name != key.Name {
			sameNamespace = append(sameNamespace, p.Name)
			continue
		}
		v := policyView{Namespace: p.Namespace, Name: p.Name, Ancestors: p.Status.Ancestors,
			Clusters: p.Clusters, Windows: []handshakes.DebugWindow{}, Certificates: []backendcerts.DebugEntry{}, Rejected: []pipeline.Rejection{}}
		if v.Clusters == nil {
			v.Clusters = []string{}
		}
		for _, w := range doc.Handshakes {
			if slices.Contains(w.Policies, key) || slices.Contains(p.Clusters, w.Cluster) {
				v.Windows = append(v.Windows, w)
			}
		}
		for _, c := range doc.Certificates {
			if slices.Contains(c.Policies, key) || slices.Contains(p.Clusters, c.Cluster) {
				v.Certificates = append(v.Certificates, c)
			}
		}
		for _, r := range doc.Rejections {
			if slices.Contains(r.Policies, key) {
				v.Rejected = append(v.Rejected, r)
			}
		}
		return v, nil
	}
	if len(sameNamespace) == 0 {
		return policyView{}, fmt.Errorf("BackendTLSPolicy %s: not found; tlsplane has no policy in namespace %q", key, key.Namespace)
	}
	return policyView{}, fmt.Errorf("BackendTLSPolicy %s: not found; namespace %q has %s", key, key.Namespace, strings.Join(sameNamespace, ", "))
}

// policyTable prints the conditions per ancestor, the clusters, the
// handshake windows, the backend certificates and the rejections, each
// under its heading.
func policyTable(v policyView) []byte {
	var out bytes.Buffer
	fmt.Fprintf(&out, "BackendTLSPolicy %s/%s\n\n", v.Namespace, v.Name)
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ANCESTOR\tCONTROLLER\tCONDITION\tSTATUS\tREASON\tMESSAGE")
	for _, a := range v.Ancestors {
		name := ancestorTitle(a.AncestorRef, v.Namespace)
		for i, c := range a.Conditions {
			anc, ctrl := name, string(a.ControllerName)
			if i > 0 {
				anc, ctrl = "", ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", anc, ctrl, c.Type, c.Status, c.Reason, orDash(oneLine(c.Message)))
		}
	}
	if len(v.Ancestors) == 0 {
		fmt.Fprintln(tw, "(no status yet)")
	}
	tw.Flush()

	fmt.Fprintln(&out, "\nCLUSTERS")
	for _, c := range v.Clusters {
		fmt.Fprintln(&out, c)
	}
	if len(v.Clusters) == 0 {
		fmt.Fprintln(&out, "(none: the policy governs no cluster served)")
	}

	fmt.Fprintln(&out, "\nHANDSHAKE WINDOWS")
	if len(v.Windows) == 0 {
		fmt.Fprintln(&out, "(no Envoy reported on its clusters within the window)")
	} else {
		tw = tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FLEET\tCLUSTER\tFAILING\tREASON\tINCREASES\tLAST REPORT")
		for _, w := range v.Windows {
			fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\t%s\n", w.Fleet, w.Cluster, w.Failing, orDash(w.Reason), increases(w.Increases), w.LastReport.UTC().Format(time.RFC3339))
		}
		tw.Flush()
	}

	fmt.Fprintln(&out, "\nBACKEND CERTIFICATES")
	if len(v.Certificates) == 0 {
		fmt.Fprintln(&out, "(no Envoy reported a certificate of its backends within the retention)")
	} else {
		tw = tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FLEET\tCLUSTER\tHOST\tSUBJECT\tISSUER\tSERIAL\tNOT AFTER\tSTATE\tVERSION\tCIPHER\tLAST SEEN")
		for _, c := range v.Certificates {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Fleet, c.Cluster, c.Host, orDash(oneLine(c.Subject)), orDash(oneLine(c.Issuer)),
				orDash(c.Serial), c.NotAfter.UTC().Format(time.RFC3339), c.State, orDash(c.Version), orDash(c.Cipher), c.LastSeen.UTC().Format(time.RFC3339))
		}
		tw.Flush()
	}

	if len(v.Rejected) > 0 {
		fmt.Fprintln(&out, "\nENVOY REJECTIONS")
		tw = tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FLEET\tNODE\tTYPE\tVERSION\tMESSAGE")
		for _, r := range v.Rejected {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Fleet, r.Node, typeTitle(r.TypeURL), orDash(r.Version), oneLine(r.Message))
		}
		tw.Flush()
	}
	return out.Bytes()
}

// ancestorTitle is Kind namespace/name[:section], the namespace defaulting
// to the policy's.
func ancestorTitle(ref gwv1.ParentReference, policyNamespace string) string {
	kind := "Gateway"
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	ns := policyNamespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	name := kind + " " + ns + "/" + string(ref.Name)
	if ref.SectionName != nil {
		name += ":" + string(*ref.SectionName)
	}
	return name
}

// increases is name=count, sorted, or "-".
func increases(m map[string]uint64) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for name, n := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", name, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// typeTitle is CDS, EDS… for a served type URL, else the URL.
func typeTitle(typeURL string) string {
	for _, c := range statusColumns {
		if c.typeURL == typeURL {
			return c.title
		}
	}
	return typeURL
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// xKind is one of the experimental kinds `tlsplane status` shows: its
// argument, its name, its list in /debug/status and the heading of the
// objects its entries name (an XBackend's parents are Gateways; a
// traffic policy's ancestors too).
type xKind struct {
	arg, kind, field, heading string
}

var xKinds = []xKind{
	{"xbackend", "XBackend", "xBackends", "PARENT"},
	{"xbackendtrafficpolicy", "XBackendTrafficPolicy", "xBackendTrafficPolicies", "ANCESTOR"},
}

// xKindOf is the kind whose argument is arg.
func xKindOf(arg string) (xKind, bool) {
	for _, k := range xKinds {
		if k.arg == arg {
			return k, true
		}
	}
	return xKind{}, false
}

// entryView is one controller's entry of an object's status: a parent of
// an XBackend, an ancestor of a policy.
type entryView struct {
	Ref        gwv1.ParentReference `json:"ref"`
	Controller string               `json:"controllerName"`
	Conditions []metav1.Condition   `json:"conditions"`
}

// xObjectView is one X-kind object as `tlsplane status xbackend` (or
// xbackendtrafficpolicy) shows it.
type xObjectView struct {
	Kind      string      `json:"kind"`
	Namespace string      `json:"namespace"`
	Name      string      `json:"name"`
	Entries   []entryView `json:"entries"`
}

// xStatusDoc is the part of /debug/status the X-kinds' views read.
type xStatusDoc struct {
	XBackends []struct {
		Namespace string                `json:"namespace"`
		Name      string                `json:"name"`
		Status    gwxv1a1.BackendStatus `json:"status"`
	} `json:"xBackends"`
	XBackendTrafficPolicies []struct {
		Namespace string            `json:"namespace"`
		Name      string            `json:"name"`
		Status    gwv1.PolicyStatus `json:"status"`
	} `json:"xBackendTrafficPolicies"`
}

// objects are k's objects of the document, with their entries.
func (d xStatusDoc) objects(k xKind) []xObjectView {
	var out []xObjectView
	switch k.kind {
	case "XBackend":
		for _, x := range d.XBackends {
			v := xObjectView{Kind: k.kind, Namespace: x.Namespace, Name: x.Name, Entries: []entryView{}}
			for _, p := range x.Status.Ancestors {
				v.Entries = append(v.Entries, entryView{p.AncestorRef, string(p.ControllerName), p.Conditions})
			}
			out = append(out, v)
		}
	case "XBackendTrafficPolicy":
		for _, p := range d.XBackendTrafficPolicies {
			v := xObjectView{Kind: k.kind, Namespace: p.Namespace, Name: p.Name, Entries: []entryView{}}
			for _, a := range p.Status.Ancestors {
				v.Entries = append(v.Entries, entryView{a.AncestorRef, string(a.ControllerName), a.Conditions})
			}
			out = append(out, v)
		}
	}
	return out
}

// printXObject prints one XBackend or XBackendTrafficPolicy of
// /debug/status as a table or as JSON.
func printXObject(w io.Writer, admin *adminClient, k xKind, ref, format string) error {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("%s %q: want NAMESPACE/NAME", k.arg, ref)
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	body, err := admin.get("/debug/status")
	if err != nil {
		return err
	}
	var doc xStatusDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("admin server %s: /debug/status: %v", admin.base, err)
	}
	var sameNamespace []string
	for _, v := range doc.objects(k) {
		if v.Namespace != key.Namespace {
			continue
		}
		if v.Name != key.Name {
			sameNamespace = append(sameNamespace, v.Name)
			continue
		}
		if format == formatJSON {
			return writeIndentedJSON(w, v)
		}
		_, err := w.Write(xObjectTable(k, v))
		return err
	}
	// Only the objects the translator reported on are listed: an XBackend
	// no route of an accepted Gateway reaches has no status of ours.
	if len(sameNamespace) == 0 {
		return fmt.Errorf("%s %s: no status; tlsplane reports on no %s in namespace %q (an XBackend gets one when a route of a Gateway of ours references it)", k.kind, key, k.kind, key.Namespace)
	}
	return fmt.Errorf("%s %s: no status; namespace %q has %s", k.kind, key, key.Namespace, strings.Join(sameNamespace, ", "))
}

// xObjectTable prints the conditions per parent (or ancestor).
func xObjectTable(k xKind, v xObjectView) []byte {
	var out bytes.Buffer
	fmt.Fprintf(&out, "%s %s/%s\n\n", v.Kind, v.Namespace, v.Name)
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tCONTROLLER\tCONDITION\tSTATUS\tREASON\tMESSAGE\n", k.heading)
	for _, e := range v.Entries {
		name := ancestorTitle(e.Ref, v.Namespace)
		for i, c := range e.Conditions {
			ref, ctrl := name, e.Controller
			if i > 0 {
				ref, ctrl = "", ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ref, ctrl, c.Type, c.Status, c.Reason, orDash(oneLine(c.Message)))
		}
	}
	if len(v.Entries) == 0 {
		fmt.Fprintln(tw, "(no status yet)")
	}
	tw.Flush()
	return out.Bytes()
}

package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/condition"
)

// StatusStore is the StatusSink of directory mode, where statuses have no
// object to be written to: it keeps the latest statuses in memory for
// /debug/status and logs every change, one line per policy, GatewayClass,
// Gateway, ListenerSet, route (of every route kind), XBackend or
// XBackendTrafficPolicy.
type StatusStore struct {
	log        *slog.Logger
	controller gwv1.GatewayController

	mu         sync.RWMutex
	statuses   map[types.NamespacedName]gwv1.PolicyStatus
	gatewayAPI translator.GatewayAPIStatuses
	rejections func() []Rejection
	handshakes func() any
	certs      func() any
	governed   func() map[types.NamespacedName][]string
	refusals   func() []translator.FleetRefusal
	withheld   func() []string
	crls       func() any
}

var _ StatusSink = (*StatusStore)(nil)

// NewStatusStore logs the conditions controller writes (default
// translator.DefaultControllerName) when they change.
func NewStatusStore(log *slog.Logger, controller gwv1.GatewayController) *StatusStore {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if controller == "" {
		controller = translator.DefaultControllerName
	}
	return &StatusStore{log: log, controller: controller}
}

// Report stores statuses and logs the policies whose conditions changed.
func (s *StatusStore) Report(statuses map[types.NamespacedName]gwv1.PolicyStatus) {
	s.mu.Lock()
	old := s.statuses
	s.statuses = statuses
	s.mu.Unlock()
	if sameMap(old, statuses) {
		return // the translator changed no status: nothing to log
	}

	// Only what changed is sorted, for the order of the log lines.
	changed := map[types.NamespacedName]bool{}
	for key, st := range statuses {
		before, existed := old[key]
		if existed && (sameSlice(before.Ancestors, st.Ancestors) || sameConditions(condition.OurAncestors(before, s.controller), condition.OurAncestors(st, s.controller))) {
			continue
		}
		changed[key] = true
	}
	for _, key := range sortedKeys(changed) {
		s.logPolicy(key, condition.OurAncestors(statuses[key], s.controller))
	}
	removed := map[types.NamespacedName]bool{}
	for key := range old {
		if _, still := statuses[key]; !still {
			removed[key] = true
		}
	}
	for _, key := range sortedKeys(removed) {
		s.log.Info("policy removed", "policy", key.String())
	}
}

// sameSlice: a and b are one slice (a status the translator carried over).
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// logPolicy writes one line: a group per condition, nested under the
// ancestor's name when the policy has several.
func (s *StatusStore) logPolicy(key types.NamespacedName, ancestors []gwv1.PolicyAncestorStatus) {
	attrs := []any{"policy", key.String()}
	level := slog.LevelInfo
	for _, a := range ancestors {
		var conds []any
		for _, c := range a.Conditions {
			if c.Status != metav1.ConditionTrue {
				level = slog.LevelWarn
			}
			conds = append(conds, slog.Group(c.Type, "status", string(c.Status), "reason", c.Reason, "message", c.Message))
		}
		if len(ancestors) == 1 {
			attrs = append(attrs, append([]any{"target", ancestorName(a.AncestorRef)}, conds...)...)
		} else {
			attrs = append(attrs, slog.Group(ancestorName(a.AncestorRef), conds...))
		}
	}
	s.log.Log(context.Background(), level, "policy status changed", attrs...)
}

// ancestorName is namespace/name[:section] of a status entry's target.
func ancestorName(ref gwv1.ParentReference) string {
	name := string(ref.Name)
	if ref.Namespace != nil {
		name = string(*ref.Namespace) + "/" + name
	}
	if ref.SectionName != nil {
		name += ":" + string(*ref.SectionName)
	}
	return name
}

// sameConditions compares what an operator reads, not lastTransitionTime.
func sameConditions(a, b []gwv1.PolicyAncestorStatus) bool {
	return slices.EqualFunc(a, b, func(x, y gwv1.PolicyAncestorStatus) bool {
		return ancestorName(x.AncestorRef) == ancestorName(y.AncestorRef) &&
			slices.EqualFunc(x.Conditions, y.Conditions, func(c, d metav1.Condition) bool {
				return c.Type == d.Type && c.Status == d.Status && c.Reason == d.Reason &&
					c.Message == d.Message && c.ObservedGeneration == d.ObservedGeneration
			})
	})
}

// debugPolicy is one entry of /debug/status.
type debugPolicy struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Status    gwv1.PolicyStatus `json:"status"`
	// Clusters are the clusters the policy governs in the last
	// translation published (ShowClusters).
	Clusters []string `json:"clusters,omitempty"`
}

// ShowRejections adds Envoy's rejections (Pipeline.Rejections) to
// /debug/status, beside the statuses they will later be reported on.
func (s *StatusStore) ShowRejections(list func() []Rejection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejections = list
}

// ShowHandshakes adds the data plane's handshake windows (handshakes.Tracker's
// Debug) to /debug/status, beside the conditions they produced.
func (s *StatusStore) ShowHandshakes(list func() any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handshakes = list
}

// ShowBackendCertificates adds the inventory of backend certificates
// (backendcerts.Inventory's Debug) to /debug/status, beside the
// conditions it produced.
func (s *StatusStore) ShowBackendCertificates(list func() any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.certs = list
}

// ShowClusters adds, per policy, the clusters it governs
// (snapshots.Publisher's Governed) to /debug/status.
func (s *StatusStore) ShowClusters(governed func() map[types.NamespacedName][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.governed = governed
}

// ShowRefusals adds the fleets the publisher refused
// (snapshots.Publisher's Refusals) to /debug/status.
func (s *StatusStore) ShowRefusals(list func() []translator.FleetRefusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusals = list
}

// ShowWithheld adds the clusters fleets without a Gateway and without a
// --fleet-namespaces grant are not served (snapshots.Publisher's
// WithheldClusters) to /debug/status.
func (s *StatusStore) ShowWithheld(list func() []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.withheld = list
}

// ShowFetchedCRLs adds the revocation lists fetched from distribution
// points (crlfetch.Fetcher's Status) to /debug/status.
func (s *StatusStore) ShowFetchedCRLs(list func() any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crls = list
}

// debugRefusal is one entry of /debug/status's refusals.
type debugRefusal struct {
	Fleet     string   `json:"fleet,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Objects   []string `json:"objects,omitempty"`
	Reason    string   `json:"reason"`
	Message   string   `json:"message"`
}

func debugRefusals(list []translator.FleetRefusal) []debugRefusal {
	out := make([]debugRefusal, 0, len(list))
	for _, r := range list {
		d := debugRefusal{Fleet: r.Fleet, Namespace: r.Namespace, Reason: r.Reason, Message: r.Message}
		for _, o := range r.Objects {
			d.Objects = append(d.Objects, o.String())
		}
		out = append(out, d)
	}
	return out
}

// DebugJSON is the latest statuses as indented JSON, sorted by policy,
// the Gateway API statuses, sorted by object, and the latest Envoy
// rejections.
func (s *StatusStore) DebugJSON() ([]byte, error) {
	s.mu.RLock()
	statuses, gatewayAPI, rejections, handshakes, certs, governed, refusals, withheld, crls := s.statuses, s.gatewayAPI, s.rejections, s.handshakes, s.certs, s.governed, s.refusals, s.withheld, s.crls
	s.mu.RUnlock()
	policies := []debugPolicy{}
	var clusters map[types.NamespacedName][]string
	if governed != nil {
		clusters = governed()
	}
	for _, key := range sortedKeys(statuses) {
		policies = append(policies, debugPolicy{key.Namespace, key.Name, statuses[key], clusters[key]})
	}
	out := append(jsonFields{{"policies", policies}}, debugGatewayAPI(gatewayAPI)...)
	list, refused, withheldClusters := []Rejection{}, []debugRefusal{}, []string{}
	if rejections != nil {
		list = rejections()
	}
	if refusals != nil {
		refused = debugRefusals(refusals())
	}
	if withheld != nil {
		if l := withheld(); l != nil {
			withheldClusters = l
		}
	}
	// Refusals are the fleets the last publish did not update;
	// withheldClusters present a policy client certificate: fleets
	// without a Gateway and without a grant are not served them.
	out = append(out, jsonField{"rejections", list}, jsonField{"refusals", refused}, jsonField{"withheldClusters", withheldClusters})
	if handshakes != nil {
		if h := handshakes(); h != nil {
			out = append(out, jsonField{"handshakes", h})
		}
	}
	if certs != nil {
		if c := certs(); c != nil {
			out = append(out, jsonField{"backendCertificates", c})
		}
	}
	if crls != nil {
		out = append(out, jsonField{"fetchedCRLs", crls()})
	}
	return json.MarshalIndent(out, "", "  ")
}

func sortedKeys[V any](m map[types.NamespacedName]V) []types.NamespacedName {
	return slices.SortedFunc(maps.Keys(m), func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}

package pipeline

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// gatewayRecorder is a recorder whose sink also takes Gateway API statuses.
type gatewayRecorder struct {
	*recorder
	got []translator.GatewayAPIStatuses
}

func (g *gatewayRecorder) ReportGatewayAPI(st translator.GatewayAPIStatuses) {
	g.add("report-gatewayapi")
	g.mu.Lock()
	g.got = append(g.got, st)
	g.mu.Unlock()
}

var web = types.NamespacedName{Namespace: "edge", Name: "web"}

func gatewayStatuses(reason string) translator.GatewayAPIStatuses {
	cond := func(t, status string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, LastTransitionTime: metav1.Now()}
	}
	// accepted is a route's status, new each time: a test changes one
	// route's without touching the others'.
	accepted := func() gwv1.RouteStatus {
		return gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{{ParentRef: gwv1.ParentReference{Name: "web"}, ControllerName: translator.DefaultControllerName,
			Conditions: []metav1.Condition{cond("Accepted", "True")}}}}
	}
	return translator.GatewayAPIStatuses{
		GatewayClasses: map[string]gwv1.GatewayClassStatus{"tlsplane": {Conditions: []metav1.Condition{cond("Accepted", "True")}}},
		Gateways: map[types.NamespacedName]gwv1.GatewayStatus{web: {
			Conditions: []metav1.Condition{cond("Accepted", "True"), cond("Programmed", "True")},
			Listeners:  []gwv1.ListenerStatus{{Name: "https", Conditions: []metav1.Condition{cond("Conflicted", "False")}}},
		}},
		RouteStatusMaps: translator.RouteStatusMaps{
			HTTPRoutes: map[types.NamespacedName]gwv1.HTTPRouteStatus{{Namespace: "edge", Name: "shop"}: {RouteStatus: accepted()}},
			GRPCRoutes: map[types.NamespacedName]gwv1.GRPCRouteStatus{{Namespace: "edge", Name: "checkout"}: {RouteStatus: accepted()}},
			TLSRoutes:  map[types.NamespacedName]gwv1.TLSRouteStatus{{Namespace: "edge", Name: "vault"}: {RouteStatus: accepted()}},
			TCPRoutes:  map[types.NamespacedName]gwv1.TCPRouteStatus{{Namespace: "edge", Name: "db"}: {RouteStatus: accepted()}},
		},
	}
}

func TestPipelineReportsGatewayAPIStatusesAfterPublishing(t *testing.T) {
	src := newFakeSource()
	rec := &gatewayRecorder{recorder: &recorder{}}
	translate := func(in translator.Inputs, prev translator.PreviousStatus, now time.Time, o translator.Options) translator.Output {
		out := rec.translate(in, prev, now, o)
		out.GatewayAPI = gatewayStatuses("Accepted")
		return out
	}
	p, err := New(Options{Source: src, Publisher: rec, Sink: rec, Translate: translate})
	if err != nil {
		t.Fatal(err)
	}
	p.sync()
	if got := strings.Join(rec.snapshot(), ","); got != "translate,publish,report,report-gatewayapi" {
		t.Fatalf("events = %s, want translate,publish,report,report-gatewayapi", got)
	}
	if len(rec.got) != 1 || len(rec.got[0].Gateways) != 1 {
		t.Fatalf("Gateway API statuses reported = %+v", rec.got)
	}

	rec.publishErr = errTest
	p.sync()
	if got := rec.snapshot(); got[len(got)-1] != "publish-error" {
		t.Errorf("after a failed publish, events = %v: statuses must not be reported", got)
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("publish failed")

func TestFanOutForwardsGatewayAPIToSinksThatTakeIt(t *testing.T) {
	plain := &recorder{}
	gw := &gatewayRecorder{recorder: &recorder{}}
	FanOut{plain, gw}.ReportGatewayAPI(gatewayStatuses("Accepted"))
	if len(gw.got) != 1 || len(plain.snapshot()) != 0 {
		t.Errorf("fan-out: gateway sink got %d, plain sink events %v; want 1 and none", len(gw.got), plain.snapshot())
	}
}

func TestStatusStoreShowsAndLogsGatewayAPIStatuses(t *testing.T) {
	var logs bytes.Buffer
	store := NewStatusStore(slog.New(slog.NewTextHandler(&logs, nil)), "")
	store.ReportGatewayAPI(gatewayStatuses("Accepted"))
	if n := strings.Count(logs.String(), `msg="status changed"`); n != 6 {
		t.Fatalf("first report: %d lines, want 6 (class, gateway, HTTP, gRPC, TLS and TCP route):\n%s", n, &logs)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("all well (Conflicted=False), yet a warning:\n%s", &logs)
	}

	logs.Reset()
	store.ReportGatewayAPI(gatewayStatuses("Accepted")) // only lastTransitionTime moved
	if logs.Len() != 0 {
		t.Fatalf("nothing changed, yet logged:\n%s", &logs)
	}
	changed := gatewayStatuses("Accepted")
	gwst := changed.Gateways[web]
	gwst.Conditions[1] = metav1.Condition{Type: "Programmed", Status: metav1.ConditionFalse, Reason: "AddressNotAssigned", Message: "no address"}
	changed.Gateways[web] = gwst
	store.ReportGatewayAPI(changed)
	line := logs.String()
	for _, want := range []string{"level=WARN", "kind=Gateway", "name=edge/web", "Programmed.reason=AddressNotAssigned"} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %q:\n%s", want, line)
		}
	}
	if n := strings.Count(line, "status changed"); n != 1 {
		t.Errorf("%d lines, want 1 (only the Gateway changed):\n%s", n, line)
	}

	logs.Reset()
	checkout := types.NamespacedName{Namespace: "edge", Name: "checkout"}
	gwst = changed.Gateways[web] // new statuses: the store keeps the last ones
	changed = gatewayStatuses("Accepted")
	changed.Gateways[web] = gwst
	changed.GRPCRoutes[checkout].Parents[0].Conditions[0] = metav1.Condition{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NoMatchingParent"}
	store.ReportGatewayAPI(changed)
	line = logs.String()
	for _, want := range []string{"level=WARN", "kind=GRPCRoute", "name=edge/checkout", `"parent web Accepted.reason"=NoMatchingParent`} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %q:\n%s", want, line)
		}
	}
	if n := strings.Count(line, "status changed"); n != 1 {
		t.Errorf("%d lines, want 1 (only the GRPCRoute changed):\n%s", n, line)
	}

	logs.Reset()
	vault, db := types.NamespacedName{Namespace: "edge", Name: "vault"}, types.NamespacedName{Namespace: "edge", Name: "db"}
	grpcst := changed.GRPCRoutes[checkout]
	changed = gatewayStatuses("Accepted")
	changed.Gateways[web], changed.GRPCRoutes[checkout] = gwst, grpcst
	changed.TLSRoutes[vault].Parents[0].Conditions[0] = metav1.Condition{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "NotAllowedByListeners"}
	changed.TCPRoutes[db].Parents[0].Conditions[0] = metav1.Condition{Type: "ResolvedRefs", Status: metav1.ConditionFalse, Reason: "BackendNotFound"}
	store.ReportGatewayAPI(changed)
	line = logs.String()
	for _, want := range []string{"kind=TLSRoute", "name=edge/vault", `"parent web Accepted.reason"=NotAllowedByListeners`,
		"kind=TCPRoute", "name=edge/db", `"parent web ResolvedRefs.reason"=BackendNotFound`} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %q:\n%s", want, line)
		}
	}
	if n := strings.Count(line, "status changed"); n != 2 {
		t.Errorf("%d lines, want 2 (only the TLSRoute and the TCPRoute changed):\n%s", n, line)
	}

	raw, err := store.DebugJSON()
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Policies       []debugPolicy                      `json:"policies"`
		GatewayClasses []debugGatewayClass                `json:"gatewayClasses"`
		Gateways       []debugGateway                     `json:"gateways"`
		HTTPRoutes     []debugRoute[gwv1.HTTPRouteStatus] `json:"httpRoutes"`
		GRPCRoutes     []debugRoute[gwv1.GRPCRouteStatus] `json:"grpcRoutes"`
		TLSRoutes      []debugRoute[gwv1.TLSRouteStatus]  `json:"tlsRoutes"`
		TCPRoutes      []debugRoute[gwv1.TCPRouteStatus]  `json:"tcpRoutes"`
	}
	if err := json.Unmarshal(raw, &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown.GatewayClasses) != 1 || len(shown.Gateways) != 1 || len(shown.HTTPRoutes) != 1 || len(shown.GRPCRoutes) != 1 ||
		shown.Gateways[0].Name != "web" || shown.Gateways[0].Status.Conditions[1].Reason != "AddressNotAssigned" ||
		shown.GRPCRoutes[0].Name != "checkout" || shown.GRPCRoutes[0].Status.Parents[0].Conditions[0].Reason != "NoMatchingParent" ||
		len(shown.TLSRoutes) != 1 || shown.TLSRoutes[0].Name != "vault" || shown.TLSRoutes[0].Status.Parents[0].Conditions[0].Reason != "NotAllowedByListeners" ||
		len(shown.TCPRoutes) != 1 || shown.TCPRoutes[0].Name != "db" || shown.TCPRoutes[0].Status.Parents[0].Conditions[0].Reason != "BackendNotFound" {
		t.Fatalf("/debug/status = %s", raw)
	}
}

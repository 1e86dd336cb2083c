package pipeline

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/tlsplane/tlsplane/translator"
)

// refusingRecorder is a gatewayRecorder whose publisher refused fleets.
type refusingRecorder struct {
	*gatewayRecorder
	refusals []translator.FleetRefusal
}

func (r *refusingRecorder) Refusals() []translator.FleetRefusal { return r.refusals }

var refusedWeb = translator.FleetRefusal{Fleet: "edge/web", Reason: translator.ReasonFleetNotServable,
	Objects: []translator.ObjectRef{{Kind: translator.KindGateway, Name: web}},
	Message: `fleet "edge/web": listener edge/web/443: references secret "edge/gone/certificate", which is not in the snapshot`}

// TestPipelineReportsARefusedFleetOnItsGateway: a fleet the publisher
// refused is reported on its Gateway, Programmed=False with the refusal's
// reason and message; the statuses the translator computed are untouched.
func TestPipelineReportsARefusedFleetOnItsGateway(t *testing.T) {
	src := newFakeSource()
	rec := &refusingRecorder{gatewayRecorder: &gatewayRecorder{recorder: &recorder{}}, refusals: []translator.FleetRefusal{refusedWeb}}
	translated := gatewayStatuses("Accepted")
	translate := func(in translator.Inputs, prev translator.PreviousStatus, now time.Time, o translator.Options) translator.Output {
		out := rec.translate(in, prev, now, o)
		out.GatewayAPI = translated
		return out
	}
	p, err := New(Options{Source: src, Publisher: rec, Sink: rec, Translate: translate})
	if err != nil {
		t.Fatal(err)
	}
	p.sync()
	if len(rec.got) != 1 {
		t.Fatalf("Gateway API statuses reported %d times, want 1", len(rec.got))
	}
	c := meta.FindStatusCondition(rec.got[0].Gateways[web].Conditions, "Programmed")
	if c == nil || c.Status != "False" || c.Reason != translator.ReasonFleetNotServable || !strings.Contains(c.Message, "edge/gone/certificate") {
		t.Errorf("Gateway edge/web Programmed = %+v, want False with the refusal", c)
	}
	if c := meta.FindStatusCondition(translated.Gateways[web].Conditions, "Programmed"); c.Status != "True" {
		t.Error("the translator's statuses were changed in place")
	}
}

// TestStatusStoreShowsRefusals: /debug/status lists the refused fleets.
func TestStatusStoreShowsRefusals(t *testing.T) {
	store := NewStatusStore(slog.New(slog.DiscardHandler), "")
	store.ShowRefusals(func() []translator.FleetRefusal { return []translator.FleetRefusal{refusedWeb} })
	body, err := store.DebugJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"fleet": "edge/web"`, `"Gateway edge/web"`, `"reason": "FleetNotServable"`, "edge/gone/certificate"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/debug/status lacks %s:\n%s", want, body)
		}
	}
}

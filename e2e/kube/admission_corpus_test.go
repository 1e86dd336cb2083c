package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
)

// corpusFloor is the fewest cases each part of the corpus must yield: if
// the module's files are not found or testdata loses files, the test
// fails instead of comparing less.
var corpusFloor = map[string]int{
	"module valid":     100, // 103 objects at v1.6.3
	"module invalid":   36,
	"testdata valid":   127,
	"testdata invalid": 175,
}

// channelFloor is the fewest cases each channel must compare (364 and 434
// today): a channel filter gone wrong must not pass by comparing nothing.
var channelFloor = map[string]int{"standard": 364, "experimental": 434}

// corpusOutcome is one case judged under one channel.
type corpusOutcome struct {
	key string // channel and case name: what the allowlist names
	// disagreement says how tlsplane and the API server differ; empty when
	// they agree.
	disagreement string
	// unexpected says how the API server differs from the case's source
	// (a corpus file in the wrong directory, or an upstream change).
	unexpected string
	// refusedByBoth with fieldsNamed of tlsplane's fields, fieldsFound of
	// them in the API server's message.
	refusedByBoth            bool
	fieldsNamed, fieldsFound int
}

// TestAdmissionCorpus: for every object of a corpus no one here tuned (the
// Gateway API module's examples and invalid examples, and testdata mirroring
// the Gateway API repository's CEL tests), tlsplane's crds package decides
// as the real kube-apiserver with the same CRDs does, under each release
// channel, and defaults an accepted object to the same object.
func TestAdmissionCorpus(t *testing.T) {
	moduleDir, err := apiserver.GatewayAPIModuleDir()
	harness.Prerequisite(t, "the sigs.k8s.io/gateway-api module's examples", err)
	cases, skipped, err := loadCorpus(append(moduleCorpus(moduleDir), ourCorpus()...))
	if err != nil {
		t.Fatal(err)
	}
	checkCorpusFloor(t, cases)
	t.Logf("corpus: %d Gateway API objects; skipped (other kinds): %v", len(cases), skipped)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var all []corpusOutcome
	for _, channel := range admissionChannels {
		outcomes := func() []corpusOutcome {
			server := serverForChannel(ctx, t, channel)
			defer server.Stop() // one channel's server at a time on a shared machine
			return judgeChannel(ctx, t, server, channel, cases)
		}()
		all = append(all, outcomes...)
		logChannelSummary(t, channel, outcomes)
		if len(outcomes) < channelFloor[channel] {
			t.Errorf("%s channel: %d cases compared, want at least %d", channel, len(outcomes), channelFloor[channel])
		}
	}
	checkOutcomes(t, all)
}

// checkCorpusFloor fails when a part of the corpus yields fewer cases than
// corpusFloor says it has.
func checkCorpusFloor(t *testing.T, cases []admissionCase) {
	t.Helper()
	got := map[string]int{}
	for _, c := range cases {
		got[strings.SplitN(c.name, ":", 2)[0]+" "+string(c.want)]++
	}
	for part, floor := range corpusFloor {
		if got[part] < floor {
			t.Errorf("corpus part %q has %d cases, want at least %d: files missing?", part, got[part], floor)
		}
	}
	t.Logf("corpus parts: %v", got)
}

// serverForChannel starts an API server with channel's CRDs, the pinned
// module's that tlsplane embeds, and nothing else: the suite's own server
// also serves the XBackend CRDs, whatever its channel.
func serverForChannel(ctx context.Context, t *testing.T, channel string) *apiserver.Server {
	t.Helper()
	began := time.Now()
	s, err := apiserver.StartWith(ctx, apiserver.Options{Channel: channel})
	if err != nil {
		t.Fatalf("start an API server with the %s channel's CRDs: %v", channel, err)
	}
	t.Logf("%s channel: API server with its CRDs started in %s", channel, time.Since(began).Round(time.Millisecond))
	return s
}

// clusterScopedKinds are the Gateway API kinds without a namespace.
var clusterScopedKinds = []string{"GatewayClass", "XMesh"}

// judgeChannel has every case of channel judged by both sides.
func judgeChannel(ctx context.Context, t *testing.T, server *apiserver.Server, channel string, cases []admissionCase) []corpusOutcome {
	t.Helper()
	apiJudge, err := newAPIServerJudge(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := newTLSPlaneJudge(channel)
	if err != nil {
		t.Fatalf("tlsplane's validator for the %s channel: %v", channel, err)
	}
	var outcomes []corpusOutcome
	for _, c := range cases {
		if !slices.Contains(c.channels, channel) {
			continue
		}
		obj := c.obj.DeepCopy()
		if obj.GetNamespace() == "" && !slices.Contains(clusterScopedKinds, obj.GetKind()) {
			obj.SetNamespace(corpusNamespace)
		}
		theirs, err := apiJudge.judge(ctx, obj)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		mine := ours.judge(obj.DeepCopy().Object)
		outcomes = append(outcomes, compareVerdicts(channel+" "+c.name, c.want, theirs, mine))
	}
	return outcomes
}

// compareVerdicts is the outcome of one case: the decisions, then for an
// object both accept the defaulted objects.
func compareVerdicts(key string, want expectation, theirs, mine verdict) corpusOutcome {
	o := corpusOutcome{key: key}
	if theirs.accepted != (want == wantValid) {
		o.unexpected = fmt.Sprintf("its source says %s, the API server %s", want, decision(theirs))
	}
	switch {
	case theirs.accepted != mine.accepted:
		o.disagreement = fmt.Sprintf("API server %s, tlsplane %s", decision(theirs), decision(mine))
	case theirs.accepted:
		diffs, err := objectDiff(theirs.defaulted, mine.defaulted)
		if err != nil {
			o.disagreement = "compare the defaulted objects: " + err.Error()
		} else if len(diffs) > 0 {
			o.disagreement = "both accept, defaulted objects differ:\n\t\t" + strings.Join(diffs, "\n\t\t")
		} else if w := warningsDiff(theirs.warnings, mine.warnings); w != "" {
			o.disagreement = "both accept, warnings differ: " + w
		}
	default:
		o.refusedByBoth = true
		o.fieldsNamed, o.fieldsFound = len(mine.fields), mentions(theirs.message, mine.fields)
	}
	return o
}

func decision(v verdict) string {
	if v.accepted {
		return "accepts"
	}
	return "refuses (" + v.message + ")"
}

// logChannelSummary prints the channel's counts and every refusal whose
// field paths the API server's message does not name.
func logChannelSummary(t *testing.T, channel string, outcomes []corpusOutcome) {
	t.Helper()
	var agreed, disagreed, allowed, refusedByBoth, named, found, pathsMissing, noPaths int
	for _, o := range outcomes {
		switch {
		case o.disagreement == "":
			agreed++
		case admissionAllowlist[o.key] != "":
			allowed++
		default:
			disagreed++
		}
		if o.refusedByBoth {
			refusedByBoth++
			named += o.fieldsNamed
			found += o.fieldsFound
			switch {
			case o.fieldsNamed == 0:
				noPaths++ // a kind or version not served: no field to name
			case o.fieldsFound < o.fieldsNamed:
				pathsMissing++
				t.Logf("field paths: %s: tlsplane names %d field(s), the API server's message %d of them", o.key, o.fieldsNamed, o.fieldsFound)
			}
		}
	}
	t.Logf("SUMMARY %s channel: %d cases compared, %d agreed, %d disagreed, %d allowlisted; refused by both %d: tlsplane's field paths in the API server's message %d/%d (%d refusals short of some, %d naming no field)",
		channel, len(outcomes), agreed, disagreed, allowed, refusedByBoth, found, named, pathsMissing, noPaths)
}

// checkOutcomes fails on every disagreement and every case the API server
// judges against its source unless the allowlist gives a reason, and on
// allowlist entries that no longer match anything.
func checkOutcomes(t *testing.T, outcomes []corpusOutcome) {
	t.Helper()
	used := map[string]bool{}
	for _, o := range outcomes {
		for _, finding := range []struct{ label, key, what string }{
			{"DISAGREE", o.key, o.disagreement},
			{"UNEXPECTED", "source " + o.key, o.unexpected},
		} {
			if finding.what == "" {
				continue
			}
			if reason := admissionAllowlist[finding.key]; reason != "" {
				used[finding.key] = true
				t.Logf("ALLOWLISTED %s: %s (why: %s)", finding.key, finding.what, reason)
				continue
			}
			t.Errorf("%s %s: %s", finding.label, finding.key, finding.what)
		}
	}
	for key := range admissionAllowlist {
		if !used[key] {
			t.Errorf("allowlist entry %q matches no disagreement: remove it", key)
		}
	}
}

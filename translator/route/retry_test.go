package route

import (
	"strings"
	"testing"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestRuleRetry(t *testing.T) {
	dur := func(s string) *gwv1.Duration { d := gwv1.Duration(s); return &d }
	n := func(i int) *int { return &i }
	for _, tc := range []struct {
		name            string
		retry           gwv1.HTTPRouteRetry
		timeouts        *gwv1.HTTPRouteTimeouts
		wantErr         string
		wantAttempts    uint32
		wantPerTry      time.Duration
		wantRequest     *time.Duration
		wantBackoffZero bool
	}{
		{name: "codes and attempts", retry: gwv1.HTTPRouteRetry{Codes: []gwv1.HTTPRouteRetryStatusCode{500}, Attempts: n(3)}, wantAttempts: 3, wantBackoffZero: true},
		{name: "backendRequest bounds each try", retry: gwv1.HTTPRouteRetry{Attempts: n(2), Backoff: dur("50ms")},
			timeouts: &gwv1.HTTPRouteTimeouts{Request: dur("10s"), BackendRequest: dur("2s")}, wantAttempts: 2, wantPerTry: 2 * time.Second, wantRequest: ptr(10 * time.Second)},
		{name: "code outside 400-599", retry: gwv1.HTTPRouteRetry{Codes: []gwv1.HTTPRouteRetryStatusCode{200}}, wantErr: "code 200"},
		{name: "attempts below 1", retry: gwv1.HTTPRouteRetry{Attempts: n(0)}, wantErr: "attempts 0"},
		{name: "backoff that does not parse", retry: gwv1.HTTPRouteRetry{Backoff: dur("soon")}, wantErr: `backoff "soon"`},
		{name: "backendRequest that does not parse", retry: gwv1.HTTPRouteRetry{}, timeouts: &gwv1.HTTPRouteTimeouts{BackendRequest: dur("x")}, wantErr: `backendRequest "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, request, err := ruleRetry(&tc.retry, tc.timeouts)
			if !errorAsWanted(t, err, tc.wantErr) {
				return
			}
			if r.Attempts != tc.wantAttempts {
				t.Errorf("attempts = %d, want %d", r.Attempts, tc.wantAttempts)
			}
			if (r.Backoff == nil) != tc.wantBackoffZero {
				t.Errorf("backoff = %v", r.Backoff)
			}
			if got := durOrZero(r.PerTry); got != tc.wantPerTry {
				t.Errorf("per try = %v, want %v", got, tc.wantPerTry)
			}
			if durOrZero(request) != durOrZero(tc.wantRequest) {
				t.Errorf("request = %v, want %v", request, tc.wantRequest)
			}
		})
	}
}

func ptr(d time.Duration) *time.Duration { return &d }

func durOrZero(d *time.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return *d
}

// errorAsWanted fails t unless err contains want (or, with want empty, is
// nil); it reports whether the case goes on to check a result.
func errorAsWanted(t *testing.T, err error, want string) bool {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatal(err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("err = %v, want one containing %q", err, want)
	}
	return want == ""
}

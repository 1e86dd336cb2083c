package route

import (
	"strings"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestMirrorShare(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	for _, tc := range []struct {
		name    string
		filter  gwv1.HTTPRequestMirrorFilter
		want    uint32
		wantErr string
	}{
		{name: "neither: all", want: 1_000_000},
		{name: "percent", filter: gwv1.HTTPRequestMirrorFilter{Percent: i32(20)}, want: 200_000},
		{name: "percent 0 mirrors none", filter: gwv1.HTTPRequestMirrorFilter{Percent: i32(0)}, want: 0},
		{name: "fraction of the default denominator 100", filter: gwv1.HTTPRequestMirrorFilter{Fraction: &gwv1.Fraction{Numerator: 35}}, want: 350_000},
		{name: "fraction 25/50", filter: gwv1.HTTPRequestMirrorFilter{Fraction: &gwv1.Fraction{Numerator: 25, Denominator: i32(50)}}, want: 500_000},
		{name: "fraction 2/3 rounds to the nearest millionth", filter: gwv1.HTTPRequestMirrorFilter{Fraction: &gwv1.Fraction{Numerator: 2, Denominator: i32(3)}}, want: 666_667},
		{name: "both", filter: gwv1.HTTPRequestMirrorFilter{Percent: i32(5), Fraction: &gwv1.Fraction{Numerator: 1}}, wantErr: "exclusive"},
		{name: "percent above 100", filter: gwv1.HTTPRequestMirrorFilter{Percent: i32(101)}, wantErr: "percent 101"},
		{name: "numerator above the denominator", filter: gwv1.HTTPRequestMirrorFilter{Fraction: &gwv1.Fraction{Numerator: 3, Denominator: i32(2)}}, wantErr: "fraction 3/2"},
		{name: "denominator 0", filter: gwv1.HTTPRequestMirrorFilter{Fraction: &gwv1.Fraction{Numerator: 0, Denominator: i32(0)}}, wantErr: "fraction 0/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mirrorShare(&tc.filter)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("mirrorShare = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

package gateway

import (
	"strings"
	"testing"
)

func TestIntersectHostnames(t *testing.T) {
	for _, tc := range []struct {
		listener string
		route    []string
		want     string
	}{
		{"", nil, "*"},
		{"", []string{"b.example", "a.example"}, "a.example,b.example"},
		{"foo.example", nil, "foo.example"},
		{"foo.example", []string{"foo.example", "bar.example"}, "foo.example"},
		{"foo.example", []string{"bar.example"}, ""},
		{"*.example", []string{"foo.example", "a.b.example", "example"}, "a.b.example,foo.example"},
		{"foo.example", []string{"*.example"}, "foo.example"},
		{"*.example", []string{"*.foo.example"}, "*.foo.example"},
		{"*.foo.example", []string{"*.example"}, "*.foo.example"},
		{"*.example", []string{"*.example"}, "*.example"},
		{"*.example", []string{"*.other"}, ""},
	} {
		got := strings.Join(intersectHostnames(tc.listener, tc.route), ",")
		if got != tc.want {
			t.Errorf("intersect(%q, %q) = %q, want %q", tc.listener, tc.route, got, tc.want)
		}
	}
}

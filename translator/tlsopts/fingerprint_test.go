package tlsopts

import "testing"

func TestNormaliseFingerprint(t *testing.T) {
	const want = "DF6FF72FE9116521268F6F2DD4966F51DF479883FE7037B39F75916AC3049D1A"
	cases := []struct {
		in, want string // want "" means rejected
	}{
		{want, want},
		{"df6ff72fe9116521268f6f2dd4966f51df479883fe7037b39f75916ac3049d1a", want},
		{"DF:6F:F7:2F:E9:11:65:21:26:8F:6F:2D:D4:96:6F:51:DF:47:98:83:FE:70:37:B3:9F:75:91:6A:C3:04:9D:1A", want},
		{"df:6F:f7:2f:E9:11:65:21:26:8f:6f:2d:d4:96:6f:51:df:47:98:83:fe:70:37:b3:9f:75:91:6a:c3:04:9d:1a", want},
		{"", ""},
		{want[:62], ""},       // 31 bytes
		{want + "00", ""},     // 33 bytes
		{"ZZ" + want[2:], ""}, // not hex
		{"DF:6F:F7:2F:E9:11:65:21:26:8F:6F:2D:D4:96:6F:51:DF:47:98:83:FE:70:37:B3:9F:75:91:6A:C3:04:9D", ""},     // 31 pairs
		{"DF6:F:F7:2F:E9:11:65:21:26:8F:6F:2D:D4:96:6F:51:DF:47:98:83:FE:70:37:B3:9F:75:91:6A:C3:04:9D:1A", ""},  // uneven pairs
		{"DF:6F:F7:2F:E9:11:65:21:26:8F:6F:2D:D4:96:6F:51:DF:47:98:83:FE:70:37:B3:9F:75:91:6A:C3:04:9D:1A:", ""}, // trailing colon
		{"DF 6F F7 2F E9 11 65 21 26 8F 6F 2D D4 96 6F 51 DF 47 98 83 FE 70 37 B3 9F 75 91 6A C3 04 9D 1A", ""},
		{"sha256 Fingerprint=DF:6F:F7:2F:E9:11:65:21:26:8F:6F:2D:D4:96:6F:51:DF:47:98:83:FE:70:37:B3:9F:75:91:6A:C3:04:9D:1A", ""},
		{"+F6FF72FE9116521268F6F2DD4966F51DF479883FE7037B39F75916AC3049D1A", ""},
	}
	for _, tc := range cases {
		got, ok := normaliseFingerprint(tc.in)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("normaliseFingerprint(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

package authconfig

import (
	"strings"
	"testing"
)

// TestTokenProblem: what makes a token unusable in an HTTP header, said without quoting the token.
func TestTokenProblem(t *testing.T) {
	for _, tc := range []struct {
		name, token, want string
	}{
		{"valid", "kpat_AbC123-._~", ""},
		{"CRLF header injection", "kpat_abc\r\nX-Evil: 1", "has a line break at byte 8"},
		{"LF", "kpat_abc\nX", "has a line break at byte 8"},
		{"NUL", "kpat_\x00", "has a control character at byte 5"},
		{"DEL", "kpat_\x7f", "has a control character at byte 5"},
		{"tab", "kpat_\tx", "has a control character at byte 5"},
		{"space", "kpat_ x", "has a space at byte 5"},
		{"non-ASCII", "kpat_é", "has a non-ASCII byte at byte 5"},
		{"too long", "kpat_" + strings.Repeat("a", maxTokenBytes), "is 1029 bytes, more than 1024"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tokenProblem(tc.token)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("tokenProblem = %q, want %q", got, tc.want)
			}
			if tc.want != "" && strings.Contains(got, tc.token) {
				t.Errorf("%q quotes the token", got)
			}
		})
	}
}

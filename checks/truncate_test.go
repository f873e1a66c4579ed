package checks

import (
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name, s string
		n       int
		unit    Unit
		tail    string
		want    string
	}{
		{"fits", "abc", 3, Bytes, "…", "abc"},
		{"empty", "", 0, Bytes, "…", ""},
		{"cut ascii", "abcdef", 5, Bytes, "…", "ab…"},
		{"cut inside a rune", "aé€x", 5, Bytes, "…", "a…"},
		{"cut at a rune start", "aé€x", 6, Bytes, "…", "aé…"},
		{"long tail", "abcdefgh", 6, Bytes, "\n…\n", "a\n…\n"},
		{"tail longer than n", "abcdef", 2, Bytes, "…", "…"},
		{"runes fit", "éééé", 4, Runes, "…", "éééé"},
		{"runes cut", "ééééé", 4, Runes, "…", "ééé…"},
		{"runes ascii", "abcdef", 4, Runes, "…", "abc…"},
		{"runes long tail", "abcdef", 4, Runes, "[cut]", "[cut]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Truncate(tt.s, tt.n, tt.unit, tt.tail)
			if got != tt.want {
				t.Errorf("Truncate(%q, %d, %d, %q) = %q; want %q", tt.s, tt.n, tt.unit, tt.tail, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Truncate(%q, %d, %d, %q) = %q is not valid UTF-8", tt.s, tt.n, tt.unit, tt.tail, got)
			}
			if l := tt.unit.len(got); l > tt.n && tt.unit.len(tt.tail) <= tt.n {
				t.Errorf("Truncate(%q, %d, %d, %q) = %q is %d long, over %d", tt.s, tt.n, tt.unit, tt.tail, got, l, tt.n)
			}
		})
	}
}

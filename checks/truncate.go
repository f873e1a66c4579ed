package checks

import "unicode/utf8"

// Unit is what a length limit counts.
type Unit int

const (
	// Bytes is what GitHub's limits on check runs, comments and
	// annotations count.
	Bytes Unit = iota
	// Runes is what a reader sees: characters, for limits on how much
	// of a text a table shows.
	Runes
)

func (u Unit) len(s string) int {
	if u == Runes {
		return utf8.RuneCountInString(s)
	}
	return len(s)
}

// Truncate cuts s to at most n units, ending it with tail when it was
// cut. It cuts on a character boundary, so valid UTF-8 stays valid. A tail
// longer than n is returned whole.
func Truncate(s string, n int, u Unit, tail string) string {
	if u.len(s) <= n {
		return s
	}
	keep := max(n-u.len(tail), 0)
	cut := keep
	if u == Runes {
		cut = len(s)
		for i := range s {
			if keep == 0 {
				cut = i
				break
			}
			keep--
		}
	}
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + tail
}

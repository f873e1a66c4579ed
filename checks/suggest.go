package checks

import "fmt"

// Closest returns the candidate s is a typo of: the nearest within two
// edits (insertions, deletions, substitutions and swaps of neighbours),
// one for a word of four letters or fewer, where two edits make another
// word ("xml" is no typo of "yaml"); the first of equals; "" when none is
// that near. "amd46" is "amd64", "jsno" is "json".
func Closest(s string, candidates []string) string {
	best, bestDist := "", 3
	if len(s) <= 4 {
		bestDist = 2
	}
	for _, c := range candidates {
		if d := distance(s, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// DidYouMean is ` (did you mean "x"?)` for the candidate s is a typo of,
// "" when there is none: the tail of an error about a value that is not
// one of a closed set.
func DidYouMean(s string, candidates []string) string {
	if c := Closest(s, candidates); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

// distance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours each cost one.
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

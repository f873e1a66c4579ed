package pipeline

import (
	"fmt"
	"strings"
)

// unifiedDiff shows how b differs from a, as a unified diff of at most max
// changed lines in hunks with three lines of context. Long lines (bundle
// objects are base64 on one line) are cut so a finding stays readable.
// Past a size bound the middle is not aligned but shown replaced.
func unifiedDiff(nameA, nameB string, a, b []byte, limit int) string {
	la, lb := splitLines(string(a)), splitLines(string(b))
	ops := lineOps(la, lb)
	const context, maxLine = 3, 160
	// posA[k] and posB[k] are the lines of a and b before op k.
	posA, posB := make([]int, len(ops)+1), make([]int, len(ops)+1)
	for k, op := range ops {
		posA[k+1], posB[k+1] = posA[k], posB[k]
		if op != '+' {
			posA[k+1]++
		}
		if op != '-' {
			posB[k+1]++
		}
	}
	// Hunks: runs of changes closer than 2*context lines, with context
	// lines around them; changes past the limit are left out.
	type hunk struct{ from, to int }
	var hunks []hunk
	changed := 0
	for k, op := range ops {
		if op == ' ' {
			continue
		}
		if changed == limit {
			break
		}
		changed++
		from, to := max(0, k-context), min(len(ops), k+context+1)
		if n := len(hunks); n > 0 && from <= hunks[n-1].to {
			hunks[n-1].to = to
		} else {
			hunks = append(hunks, hunk{from, to})
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", nameA, nameB)
	for _, h := range hunks {
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", posA[h.from]+1, posA[h.to]-posA[h.from], posB[h.from]+1, posB[h.to]-posB[h.from])
		for k := h.from; k < h.to; k++ {
			text := ""
			if ops[k] == '+' {
				text = lb[posB[k]]
			} else {
				text = la[posA[k]]
			}
			if len(text) > maxLine {
				text = fmt.Sprintf("%s... (%d more bytes)", text[:maxLine], len(text)-maxLine)
			}
			sb.WriteByte(ops[k])
			sb.WriteString(text)
			sb.WriteByte('\n')
		}
	}
	total := 0
	for _, op := range ops {
		if op != ' ' {
			total++
		}
	}
	if total > changed {
		fmt.Fprintf(&sb, "(%d more changed lines not shown)\n", total-changed)
	}
	return sb.String()
}

// splitLines splits text into lines without their newlines.
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// lineOps aligns a and b by longest common subsequence, after their common
// head and tail: ' ' keeps a line, '-' drops one of a, '+' adds one of b.
func lineOps(a, b []string) []byte {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	ea, eb := len(a), len(b)
	for ea > head && eb > head && a[ea-1] == b[eb-1] {
		ea, eb = ea-1, eb-1
	}
	ops := []byte(strings.Repeat(" ", head))
	ma, mb := a[head:ea], b[head:eb]
	if len(ma)*len(mb) > 1<<22 {
		ops = append(ops, []byte(strings.Repeat("-", len(ma))+strings.Repeat("+", len(mb)))...)
	} else {
		lcs := make([][]int32, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				ops = append(ops, ' ')
				i, j = i+1, j+1
			case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, '-')
				i++
			default:
				ops = append(ops, '+')
				j++
			}
		}
	}
	return append(ops, []byte(strings.Repeat(" ", len(a)-ea))...)
}

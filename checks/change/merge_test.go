package change

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMerge3(t *testing.T) {
	base := "a\nb\nc\nd\ne\nf\n"
	tests := []struct {
		name          string
		ours, theirs  string
		want          string
		conflict      bool
		base_override *string
	}{
		{name: "one side", ours: base, theirs: "a\nb\nC\nd\ne\nf\n", want: "a\nb\nC\nd\ne\nf\n"},
		{name: "other side", ours: "a\nb\nC\nd\ne\nf\n", theirs: base, want: "a\nb\nC\nd\ne\nf\n"},
		{name: "different lines", ours: "A\nb\nc\nd\ne\nf\n", theirs: "a\nb\nc\nd\ne\nF\n", want: "A\nb\nc\nd\ne\nF\n"},
		{name: "same change", ours: "a\nB\nc\nd\ne\nf\n", theirs: "a\nB\nc\nd\ne\nf\n", want: "a\nB\nc\nd\ne\nf\n"},
		{name: "insertions apart", ours: "a\nx\nb\nc\nd\ne\nf\n", theirs: "a\nb\nc\nd\ne\ny\nf\n", want: "a\nx\nb\nc\nd\ne\ny\nf\n"},
		{name: "same line differently", ours: "a\nb\nX\nd\ne\nf\n", theirs: "a\nb\nY\nd\ne\nf\n", conflict: true},
		{name: "adjacent lines", ours: "a\nb\nX\nd\ne\nf\n", theirs: "a\nb\nc\nY\ne\nf\n", conflict: true},
		{name: "both append", ours: base + "g\n", theirs: base + "h\n", conflict: true},
		{name: "delete and change", ours: "a\nb\nd\ne\nf\n", theirs: "a\nb\nC\nd\ne\nf\n", conflict: true},
		{name: "binary", ours: "a\x00\n", theirs: "b\n", conflict: true},
		{name: "no final newline", ours: "A\nb\nc\nd\ne\nf", theirs: "a\nb\nc\nd\ne\nf\ng", conflict: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Merge3([]byte(base), []byte(tt.ours), []byte(tt.theirs))
			if ok == tt.conflict {
				t.Fatalf("clean = %v, want %v (got %q)", ok, !tt.conflict, got)
			}
			if ok && string(got) != tt.want {
				t.Errorf("merged %q, want %q", got, tt.want)
			}
		})
	}
}

// gitAt runs git in dir and returns its output and exit code; the test
// fails on any other error.
func gitAt(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// randomEdit changes a few lines of lines: replaced, inserted or removed.
func randomEdit(r *rand.Rand, lines []string, tag string) []string {
	out := append([]string(nil), lines...)
	for range 1 + r.IntN(3) {
		i := r.IntN(len(out) + 1)
		switch r.IntN(3) {
		case 0:
			out = append(out[:i], append([]string{fmt.Sprintf("%s%d", tag, r.IntN(5))}, out[i:]...)...)
		case 1:
			if i < len(out) {
				out = append(out[:i], out[i+1:]...)
			}
		default:
			if i < len(out) {
				out[i] = fmt.Sprintf("%s%d", tag, r.IntN(5))
			}
		}
	}
	return out
}

func joinLines(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}

// TestMerge3AgreesWithGit: on random edits of one file by both sides,
// where Merge3 and git merge-file both merge, the results are byte for
// byte the same. Where the sides' lines repeat, two shortest edit scripts
// can align them differently, and then one merge may call a conflict what
// the other merges; such cases are counted and must stay rare. Neither
// direction is a risk to main: GitHub refuses what git cannot merge, and
// the merge decision compares main's tree after the merge with the tree
// it judged.
func TestMerge3AgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: " + err.Error())
	}
	dir := t.TempDir()
	var stricter, looser, cases int
	for seed := range uint64(150) {
		r := rand.New(rand.NewPCG(seed, 3))
		var base []string
		for i := range 5 + r.IntN(25) {
			// Repeated lines make the line matching ambiguous, as
			// YAML's "- name:" lines do.
			base = append(base, fmt.Sprintf("l%d", i%(3+r.IntN(8))))
		}
		ours, theirs := randomEdit(r, base, "o"), randomEdit(r, base, "t")
		files := map[string]string{"base": joinLines(base), "ours": joinLines(ours), "theirs": joinLines(theirs)}
		for n, c := range files {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, code := gitAt(t, dir, "merge-file", "-p", "ours", "base", "theirs")
		got, ok := Merge3([]byte(files["base"]), []byte(files["ours"]), []byte(files["theirs"]))
		cases++
		switch {
		case code != 0 && ok:
			looser++
		case code == 0 && ok && string(got) != want:
			t.Errorf("seed %d: merged\n%s\ngit merged\n%s", seed, got, want)
		case code == 0 && !ok:
			stricter++
		}
	}
	t.Logf("%d cases; Merge3 called %d conflicts that git merged, and merged %d that git did not", cases, stricter, looser)
	if (stricter+looser)*25 > cases {
		t.Errorf("Merge3 and git disagree on %d of %d cases", stricter+looser, cases)
	}
}

// TestMergeAgreesWithGitMergeTree: two branches change random files of a
// random tree (some the same file, some turning a file into a directory);
// where git merge-tree merges them, Merge writes the same tree id, and
// where it finds conflicts Merge does too (or, on ambiguous lines, rarely
// the other way round: see TestMerge3AgreesWithGit).
func TestMergeAgreesWithGitMergeTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: " + err.Error())
	}
	var disagree, cases int
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 11))
		dir := t.TempDir()
		GitCLI(t, dir, "", "init", "-q", "-b", "main")
		paths := []string{"a.yaml", "catalog/foo/index.yaml", "catalog/foo/channels.yaml", "catalog/bar/index.yaml", "catalog/bar/x/y.yaml", "OWNERS"}
		write := func(p, data string) {
			full := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		content := map[string][]string{}
		for _, p := range paths {
			var l []string
			for i := range 8 + r.IntN(8) {
				l = append(l, fmt.Sprintf("%s-%d", p, i))
			}
			content[p] = l
			write(p, joinLines(l))
		}
		GitCLI(t, dir, "", "add", "-A")
		GitCLI(t, dir, "", "commit", "-q", "-m", "base")
		side := func(branch, tag string) {
			GitCLI(t, dir, "", "checkout", "-q", "-b", branch, "main")
			for range 1 + r.IntN(3) {
				p := paths[r.IntN(len(paths))]
				full := filepath.Join(dir, filepath.FromSlash(p))
				switch r.IntN(5) {
				case 0:
					os.RemoveAll(full)
				case 1:
					write(p+".new/z.yaml", tag+"\n")
				default:
					write(p, joinLines(randomEdit(r, content[p], tag)))
				}
			}
			GitCLI(t, dir, "", "add", "-A")
			GitCLI(t, dir, "", "commit", "-q", "--allow-empty", "-m", tag)
		}
		side("ours", "o")
		side("theirs", "t")
		out, code := gitAt(t, dir, "merge-tree", "--write-tree", "ours", "theirs")
		repo, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		ours, theirs := GitCLI(t, dir, "", "rev-parse", "ours"), GitCLI(t, dir, "", "rev-parse", "theirs")
		m, err := Merge(repo, ours, theirs)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		cases++
		gitTree := strings.SplitN(strings.TrimSpace(out), "\n", 2)[0]
		switch {
		case code == 0 && m.Clean():
			if m.Tree != gitTree {
				t.Errorf("seed %d: merged tree %s, git merge-tree wrote %s", seed, m.Tree, gitTree)
			}
			// The merge commit is readable as a tree, with the merged
			// tree.
			if _, err := TreeFS(repo, m.SHA); err != nil {
				t.Errorf("seed %d: the merge commit %s cannot be read: %v", seed, m.SHA, err)
			}
			if got := GitCLI(t, dir, "", "rev-parse", m.SHA+"^{tree}"); got != m.Tree {
				t.Errorf("seed %d: git reads the merge commit's tree as %s, not %s", seed, got, m.Tree)
			}
		case code == 1 && !m.Clean(), code == 0 && !m.Clean(), code == 1 && m.Clean():
			if (code == 0) != m.Clean() {
				disagree++
				t.Logf("seed %d: git merge-tree exit %d, Merge conflicts %v", seed, code, m.Conflicts)
			}
		default:
			t.Fatalf("seed %d: git merge-tree exit %d: %s", seed, code, out)
		}
	}
	if disagree*10 > cases {
		t.Errorf("Merge and git merge-tree disagree on %d of %d merges", disagree, cases)
	}
}

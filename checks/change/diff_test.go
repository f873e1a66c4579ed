package change

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// GitCLI runs the git CLI in dir with stdin, a fixed identity and date,
// and returns its trimmed output; without git the test is skipped, saying
// why. Exported for the package's external tests.
func GitCLI(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("this test builds its repository with the git CLI, which is not installed: " + err.Error())
	}
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE=2024-01-01T00:00:00Z",
		"GIT_COMMITTER_DATE=2024-01-01T00:00:00Z")
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// TestDiffAgreesWithGoGit: on random changes to random trees (files added,
// removed, modified, made executable, turned into directories and back),
// the diff that reads only the trees that differ lists exactly what
// go-git's diff of the whole trees lists, renames included.
func TestDiffAgreesWithGoGit(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			dir := t.TempDir()
			GitCLI(t, dir, "", "init", "-q")
			write := func(p, data string, exec bool) {
				full := filepath.Join(dir, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				mode := os.FileMode(0o644)
				if exec {
					mode = 0o755
				}
				if err := os.WriteFile(full, []byte(data), mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(full, mode); err != nil {
					t.Fatal(err)
				}
			}
			var files []string
			for i := range 30 {
				p := fmt.Sprintf("d%d/s%d/f%d.yaml", r.IntN(3), r.IntN(4), i)
				if r.IntN(5) == 0 {
					p = fmt.Sprintf("top%d", i)
				}
				files = append(files, p)
				write(p, fmt.Sprintf("content %d %d\n", i, r.IntN(3)), false)
			}
			GitCLI(t, dir, "", "add", "-A")
			GitCLI(t, dir, "", "commit", "-q", "-m", "base")
			base := GitCLI(t, dir, "", "rev-parse", "HEAD")
			for i := range 1 + r.IntN(6) {
				p := files[r.IntN(len(files))]
				full := filepath.Join(dir, filepath.FromSlash(p))
				switch r.IntN(6) {
				case 0: // modify
					write(p, fmt.Sprintf("changed %d\n", i), false)
				case 1: // remove
					os.Remove(full)
				case 2: // add
					write(fmt.Sprintf("d%d/new%d/n%d.yaml", r.IntN(4), i, i), "new\n", false)
				case 3: // executable
					if _, err := os.Stat(full); err == nil {
						os.Chmod(full, 0o755)
					}
				case 4: // a file becomes a directory
					os.Remove(full)
					write(p+"/inside.yaml", "inside\n", false)
				case 5: // a directory goes, or a file moves
					if r.IntN(2) == 0 && strings.Contains(p, "/") {
						os.RemoveAll(filepath.Dir(full))
					} else if data, err := os.ReadFile(full); err == nil {
						os.Remove(full)
						write(p+".moved", string(data), false)
					}
				}
			}
			GitCLI(t, dir, "", "add", "-A")
			GitCLI(t, dir, "", "commit", "-q", "--allow-empty", "-m", "head")
			head := GitCLI(t, dir, "", "rev-parse", "HEAD")

			repo, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			from, err := repo.CommitObject(plumbing.NewHash(base))
			if err != nil {
				t.Fatal(err)
			}
			to, err := repo.CommitObject(plumbing.NewHash(head))
			if err != nil {
				t.Fatal(err)
			}
			got, err := diff(repo, from, to)
			if err != nil {
				t.Fatal(err)
			}
			want, err := gitDiff(from, to)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("diff:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

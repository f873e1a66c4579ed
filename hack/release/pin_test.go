package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const released = "ghcr.io/catalogbot/catalogbot-action@sha256:f56d0f7df1850d2a32af54f3f4f350ae0226bec5acdde0663e84e7f4ba299007"

// TestPinGolden pins the sample action.yml and compares the result with
// testdata/action.pinned.yml: only runs.image changes.
func TestPinGolden(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pinAction(src, released)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "action.pinned.yml")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("pinned action.yml differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
	// Pinning again to another digest changes that line only.
	again, err := pinAction(got, strings.Replace(released, "f56d", "0000", 1))
	if err != nil {
		t.Fatal(err)
	}
	if changed := changedLines(got, again); len(changed) != 1 || !strings.Contains(changed[0], "image: docker://ghcr.io/catalogbot/catalogbot-action@sha256:0000") {
		t.Errorf("re-pinning changed %q, want the image line only", changed)
	}
}

// TestPinProjectAction pins the repository's own action.yml, as the
// release workflow does: one line changes, to the docker:// image.
func TestPinProjectAction(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte("\n  image: action.Dockerfile\n")) {
		t.Fatal("action.yml on the branch must build action.Dockerfile: only the release workflow pins it")
	}
	got, err := pinAction(src, released)
	if err != nil {
		t.Fatal(err)
	}
	changed := changedLines(src, got)
	if want := "  image: docker://" + released; len(changed) != 1 || changed[0] != want {
		t.Errorf("changed lines %q, want [%q]", changed, want)
	}
}

func TestPinErrors(t *testing.T) {
	tests := []struct {
		name, src, ref, want string
	}{
		{"tag, not digest", "runs:\n  using: docker\n  image: Dockerfile\n", "ghcr.io/a/b:v1", "want repository@sha256:digest"},
		{"no runs", "name: x\n", released, "no runs: mapping"},
		{"no image", "runs:\n  using: docker\n  env:\n    image: x\n", released, "line 1: runs has no image key"},
		{"not docker", "runs:\n  using: node20\n  image: x\n", released, `runs.using is "node20"`},
		{"image of the next key", "runs:\n  using: docker\nother:\n  image: x\n", released, "has no image key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pinAction([]byte(tt.src), tt.ref)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("pinAction: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// changedLines are the lines of b that differ from a's, which must have as
// many lines.
func changedLines(a, b []byte) []string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	if len(la) != len(lb) {
		return []string{"line count changed"}
	}
	var out []string
	for i := range la {
		if la[i] != lb[i] {
			out = append(out, lb[i])
		}
	}
	return out
}

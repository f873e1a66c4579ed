package review

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
)

// TestEvaluateMisread stores other bytes under the id of a catalog file
// the pull request changes (or of one it leaves alone) and expects no
// outcome at all: an error naming the path and the object, never a
// verdict, findings included, on bytes that are not the repository's.
func TestEvaluateMisread(t *testing.T) {
	broken := strings.Replace(fbctest.Foo, "foo", "fxo", 1) // same size, invalid
	tests := []struct {
		name, path, content string
	}{
		{"a changed file", "catalog/foo/catalog.yaml", fbctest.Foo + "\n"},
		{"OWNERS on the base", "catalog/foo/OWNERS", "approvers: [alice]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			base := r.Commit("base", map[string]string{
				"OWNERS":                   "approvers: [root-owner]\n",
				"catalog/foo/OWNERS":       "approvers: [alice]\n",
				"catalog/foo/catalog.yaml": fbctest.Foo,
				"catalog/foo/.indexignore": "OWNERS\n",
			})
			head := r.Commit("head", map[string]string{"catalog/foo/catalog.yaml": fbctest.Foo + "\n"})

			// Without the misread the change is judged.
			c, b, h, err := change.FromGit(r.Dir, base, head)
			if err != nil {
				t.Fatal(err)
			}
			c.Author = "alice"
			if _, err := Evaluate(context.Background(), &PR{Change: c, Base: b, Head: h}); err != nil {
				t.Fatalf("intact repository: %v", err)
			}

			id := plumbing.ComputeHash(plumbing.BlobObject, []byte(tt.content)).String()
			other := broken
			if tt.path != "catalog/foo/catalog.yaml" {
				other = "approvers: [mallo]\n"
			}
			other += strings.Repeat("\n", len(tt.content)-len(other))
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			w.Write([]byte("blob " + strconv.Itoa(len(other)) + "\x00" + other))
			w.Close()
			loose := filepath.Join(r.Dir, ".git", "objects", id[:2], id[2:])
			os.Chmod(loose, 0o644)
			if err := os.WriteFile(loose, z.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}

			c, b, h, err = change.FromGit(r.Dir, base, head)
			if err != nil {
				t.Fatal(err)
			}
			c.Author = "alice"
			o, err := Evaluate(context.Background(), &PR{Change: c, Base: b, Head: h})
			if !errors.Is(err, change.ErrCorruptObject) {
				t.Fatalf("Evaluate = %+v, %v; want no outcome and an error wrapping ErrCorruptObject", o, err)
			}
			if o != nil {
				t.Errorf("an outcome beside the error: %+v", o)
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), id) {
				t.Errorf("%q does not name %s and %s", err, tt.path, id)
			}
		})
	}
}

// TestEvaluateMissing deletes the blobs of a changed catalog file from the
// object store on both sides, as a partial clone leaves them, and expects
// the fbc check not to judge: pending, naming the path and an object it
// could not read, never "valid" with the failure to read taken for one
// already on the base branch. Which side's object it meets first depends
// on what the process has read before (the package index is cached by
// tree id), so either is right.
func TestEvaluateMissing(t *testing.T) {
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		"OWNERS":                   "approvers: [root-owner]\n",
		"catalog/foo/OWNERS":       "approvers: [alice]\n",
		"catalog/foo/catalog.yaml": fbctest.Foo,
		"catalog/foo/.indexignore": "OWNERS\n",
	})
	head := r.Commit("head", map[string]string{"catalog/foo/catalog.yaml": fbctest.Foo + "\n"})
	var ids []string
	for _, content := range []string{fbctest.Foo, fbctest.Foo + "\n"} {
		id := plumbing.ComputeHash(plumbing.BlobObject, []byte(content)).String()
		ids = append(ids, id)
		if err := os.Remove(filepath.Join(r.Dir, ".git", "objects", id[:2], id[2:])); err != nil {
			t.Fatal(err)
		}
	}

	c, b, h, err := change.FromGit(r.Dir, base, head)
	if err != nil {
		t.Fatal(err)
	}
	c.Author = "alice"
	o, err := Evaluate(context.Background(), &PR{Change: c, Base: b, Head: h})
	if err != nil {
		t.Fatal(err)
	}
	if v, title := o.Verdict(); v == checks.Success || v == checks.Neutral {
		t.Errorf("verdict %s (%s) on a catalog file nobody read", v, title)
	}
	var fbcRes *checks.Result
	for i := range o.Report.Results {
		if o.Report.Results[i].Name == pipeline.FBCName {
			fbcRes = &o.Report.Results[i]
		}
	}
	if fbcRes == nil {
		t.Fatal("no fbc result")
	}
	if fbcRes.Conclusion != checks.Pending {
		t.Errorf("fbc concluded %s: %s", fbcRes.Conclusion, fbcRes.Summary)
	}
	if len(fbcRes.Findings) > 0 {
		t.Errorf("findings on a file nobody read: %+v", fbcRes.Findings)
	}
	if len(fbcRes.Waits) != 1 {
		t.Fatalf("waits %+v, want one", fbcRes.Waits)
	}
	w := fbcRes.Waits[0]
	if w.Class != checks.WaitUnreadable || w.Path != "catalog/foo/catalog.yaml" || !slices.Contains(ids, w.Object) {
		t.Errorf("wait %+v, want the unreadable catalog/foo/catalog.yaml as one of %v", w, ids)
	}
	for _, s := range []string{"catalog/foo/catalog.yaml", w.Object, "not in the repository"} {
		if !strings.Contains(fbcRes.Summary, s) {
			t.Errorf("summary %q does not say %q", fbcRes.Summary, s)
		}
	}
	if strings.Contains(fbcRes.Summary, "catalog is valid") || !strings.HasPrefix(fbcRes.Summary, "Not judged") {
		t.Errorf("summary calls it valid: %q", fbcRes.Summary)
	}
}

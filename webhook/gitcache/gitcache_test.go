package gitcache

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/memory"
)

// origin is a repository served over git's smart HTTP protocol, in memory,
// that asks for user x-access-token with one password.
type origin struct {
	t     *testing.T
	repo  *git.Repository
	wt    *git.Worktree
	token string
	srv   *httptest.Server

	mu     sync.Mutex
	served []string // one entry per upload-pack request: the wanted refs' count
	// stall, when set, holds every pack request without an answer until
	// the client gives up.
	stall bool
}

func newOrigin(t *testing.T, token string) *origin {
	t.Helper()
	repo, err := git.Init(memory.NewStorage(), memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	o := &origin{t: t, repo: repo, wt: wt, token: token}
	o.srv = httptest.NewServer(o)
	t.Cleanup(o.srv.Close)
	return o
}

func (o *origin) url() string { return o.srv.URL + "/o/r.git" }

// commit writes files (a "" value deletes) on top of parent ("" for none)
// and points ref at the new commit.
func (o *origin) commit(ref, parent string, files map[string]string) string {
	o.t.Helper()
	if parent != "" {
		if err := o.wt.Checkout(&git.CheckoutOptions{Hash: plumbing.NewHash(parent), Force: true}); err != nil {
			o.t.Fatal(err)
		}
	}
	for name, data := range files {
		if data == "" {
			if _, err := o.wt.Remove(name); err != nil {
				o.t.Fatal(err)
			}
			continue
		}
		f, err := o.wt.Filesystem.Create(name)
		if err != nil {
			o.t.Fatal(err)
		}
		f.Write([]byte(data))
		f.Close()
		if _, err := o.wt.Add(name); err != nil {
			o.t.Fatal(err)
		}
	}
	h, err := o.wt.Commit("change", &git.CommitOptions{Author: &object.Signature{Name: "a", Email: "a@example.com", When: time.Unix(1e9, 0)}, AllowEmptyCommits: true})
	if err != nil {
		o.t.Fatal(err)
	}
	if err := o.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(ref), h)); err != nil {
		o.t.Fatal(err)
	}
	return h.String()
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if user, pass, ok := r.BasicAuth(); !ok || user != "x-access-token" || pass != o.token {
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return
	}
	ep, _ := transport.NewEndpoint("/o/r.git")
	srv := server.NewServer(server.MapLoader{ep.String(): o.repo.Storer})
	sess, err := srv.NewUploadPackSession(ep, nil)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	switch {
	case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/info/refs") && r.URL.Query().Get("service") == "git-upload-pack":
		ar, err := sess.AdvertisedReferencesContext(r.Context())
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		ar.Prefix = [][]byte{[]byte("# service=git-upload-pack"), nil}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		if err := ar.Encode(w); err != nil {
			o.t.Error(err)
		}
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
		body, _ := io.ReadAll(r.Body)
		req := packp.NewUploadPackRequest()
		if err := req.Decode(bytes.NewReader(body)); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		// go-git's server decodes the wants only; count the haves the
		// client sent by scanning the pkt-lines.
		haves := 0
		sc := pktline.NewScanner(bytes.NewReader(body))
		for sc.Scan() {
			if bytes.HasPrefix(sc.Bytes(), []byte("have ")) {
				haves++
			}
		}
		o.mu.Lock()
		o.served = append(o.served, strings.Repeat("w", len(req.Wants))+strings.Repeat("h", min(haves, 1)))
		stall := o.stall
		o.mu.Unlock()
		if stall {
			<-r.Context().Done()
			return
		}
		resp, err := sess.UploadPack(r.Context(), req)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
		if err := resp.Encode(w); err != nil {
			o.t.Error(err)
		}
	default:
		http.NotFound(w, r)
	}
}

func read(t *testing.T, fsys fs.FS, name string) string {
	t.Helper()
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

func TestPullRequestTrees(t *testing.T) {
	o := newOrigin(t, "sekrit")
	base := o.commit("refs/heads/main", "", map[string]string{"OWNERS": "approvers: [a]\n", "catalog/foo/index.yaml": "v1\n"})
	head := o.commit("refs/pull/1/head", base, map[string]string{"catalog/foo/index.yaml": "v2\n"})

	c, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := Source{Repo: "O/R", URL: o.url(), Token: "sekrit"}
	ctx := context.Background()
	snap, err := c.PullRequest(ctx, src, "main", 1, head)
	if err != nil {
		t.Fatal(err)
	}
	if snap.BaseSHA != base || snap.HeadSHA != head {
		t.Fatalf("snapshot %s..%s, want %s..%s", snap.BaseSHA, snap.HeadSHA, base, head)
	}
	if got := read(t, snap.Base, "catalog/foo/index.yaml"); got != "v1\n" {
		t.Errorf("base file = %q", got)
	}
	if got := read(t, snap.Head, "catalog/foo/index.yaml"); got != "v2\n" {
		t.Errorf("head file = %q", got)
	}

	// The PR moves: the old head is asked for and the error says so.
	head2 := o.commit("refs/pull/1/head", head, map[string]string{"catalog/foo/index.yaml": "v3\n"})
	_, err = c.PullRequest(ctx, src, "main", 1, head)
	var moved *HeadMovedError
	if !errors.As(err, &moved) || !errors.Is(err, ErrHeadMoved) || moved.Got != head2 || moved.Want != head {
		t.Fatalf("err = %v, want a HeadMovedError from %s to %s", err, head, head2)
	}

	// The base moves too; the next fetch is incremental (it tells the
	// server what it has) and sees both.
	base2 := o.commit("refs/heads/main", base, map[string]string{"catalog/bar/index.yaml": "bar\n", "OWNERS": ""})
	snap, err = c.PullRequest(ctx, src, "main", 1, head2)
	if err != nil {
		t.Fatal(err)
	}
	if snap.BaseSHA != base2 || read(t, snap.Head, "catalog/foo/index.yaml") != "v3\n" {
		t.Errorf("after moves: base %s head file %q", snap.BaseSHA, read(t, snap.Head, "catalog/foo/index.yaml"))
	}
	o.mu.Lock()
	last := o.served[len(o.served)-1]
	o.mu.Unlock()
	if !strings.Contains(last, "h") {
		t.Errorf("the last fetch sent no haves (%q): not incremental; all: %q", last, o.served)
	}

	paths, err := c.ChangedPaths("o/r", base, base2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"OWNERS", "catalog/bar/index.yaml"}; !slices.Equal(paths, want) {
		t.Errorf("changed paths = %q, want %q", paths, want)
	}

	tip, err := c.Branch(ctx, src, "main")
	if err != nil || tip != base2 {
		t.Errorf("Branch(main) = %s, %v; want %s", tip, err, base2)
	}

	for _, tc := range []struct {
		from     string
		max      int
		want     []string
		complete bool
	}{
		{base, 10, []string{base2}, true},
		{base2, 10, nil, true},
		{"", 10, []string{base2, base}, true},
		{"", 1, []string{base2}, false},
		{head, 10, []string{base2, base}, false}, // not on the branch
	} {
		shas, complete, err := c.FirstParents("o/r", tc.from, base2, tc.max)
		if err != nil || !slices.Equal(shas, tc.want) || complete != tc.complete {
			t.Errorf("FirstParents(%.7s, %d) = %.7q, %v, %v; want %.7q, %v", tc.from, tc.max, shas, complete, err, tc.want, tc.complete)
		}
	}
}

func TestFetchErrors(t *testing.T) {
	o := newOrigin(t, "sekrit")
	base := o.commit("refs/heads/main", "", map[string]string{"a": "a\n"})
	c, _ := New(t.TempDir())
	ctx := context.Background()
	tests := []struct {
		name   string
		src    Source
		branch string
		pr     int
		want   string
	}{
		{"wrong token", Source{Repo: "o/r", URL: o.url(), Token: "nope"}, "main", 1, "authentication"},
		{"no token", Source{Repo: "o/r", URL: o.url()}, "main", 1, "authentication"},
		{"escaping name", Source{Repo: "../x", URL: o.url(), Token: "sekrit"}, "main", 1, "invalid repository name"},
		{"bad branch", Source{Repo: "o/r", URL: o.url(), Token: "sekrit"}, "a:b", 1, "invalid branch name"},
		{"no such pull request", Source{Repo: "o/r", URL: o.url(), Token: "sekrit"}, "main", 9, "refs/pull/9/head"},
		{"bad number", Source{Repo: "o/r", URL: o.url(), Token: "sekrit"}, "main", 0, "invalid pull request number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.PullRequest(ctx, tc.src, tc.branch, tc.pr, "")
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tc.want)) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := c.Tree("o/r", base); err == nil {
		t.Error("a tree of a commit never fetched was read")
	}
}

// TestConcurrentFetchAndRead fetches one repository from several goroutines
// while others read trees fetched earlier: the per-repository lock and
// per-reader handles keep them apart (run with -race).
func TestConcurrentFetchAndRead(t *testing.T) {
	o := newOrigin(t, "t")
	base := o.commit("refs/heads/main", "", map[string]string{"f": "0\n"})
	heads := make([]string, 4)
	for i := range heads {
		heads[i] = o.commit("refs/pull/"+string(rune('1'+i))+"/head", base, map[string]string{"f": string(rune('a'+i)) + "\n"})
	}
	c, _ := New(t.TempDir())
	src := Source{Repo: "o/r", URL: o.url(), Token: "t"}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(heads))
	for i, h := range heads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap, err := c.PullRequest(context.Background(), src, "main", i+1, h)
			if err != nil {
				errs <- err
				return
			}
			for range 20 {
				if got := read(t, snap.Head, "f"); got != string(rune('a'+i))+"\n" {
					errs <- errors.New("PR " + string(rune('1'+i)) + " read " + got)
					return
				}
				if got := read(t, snap.Base, "f"); got != "0\n" {
					errs <- errors.New("base read " + got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMergeGroupRef fetches a merge queue's commit by its ref, which no
// pull request names, and reads the change from its base (a parent, which
// the one fetch brought) to it; a ref outside refs/heads/ is refused.
func TestMergeGroupRef(t *testing.T) {
	o := newOrigin(t, "sekrit")
	base := o.commit("refs/heads/main", "", map[string]string{"a": "a\n", "b": "b\n"})
	ref := "refs/heads/gh-readonly-queue/main/pr-7-" + base
	head := o.commit(ref, base, map[string]string{"a": "a2\n", "c": "c\n"})
	c, _ := New(t.TempDir())
	src := Source{Repo: "o/r", URL: o.url(), Token: "sekrit"}
	got, err := c.Ref(context.Background(), src, ref)
	if err != nil || got != head {
		t.Fatalf("Ref = %s, %v; want %s", got, err, head)
	}
	ch, baseFS, headFS, err := c.Change("o/r", base, head)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range ch.Files {
		files = append(files, f.Status+" "+f.Path)
	}
	if want := []string{"modified a", "added c"}; !slices.Equal(files, want) || ch.Repo != "o/r" || ch.BaseSHA != base || ch.HeadSHA != head {
		t.Errorf("change = %+v (files %q), want %q from %s to %s", ch, files, want, base, head)
	}
	if read(t, baseFS, "a") != "a\n" || read(t, headFS, "a") != "a2\n" {
		t.Errorf("trees: base a %q, head a %q", read(t, baseFS, "a"), read(t, headFS, "a"))
	}
	if _, err := c.Ref(context.Background(), src, "refs/heads/gh-readonly-queue/main/pr-8-"+base); !errors.Is(err, ErrNoRef) {
		t.Errorf("Ref of a ref the repository lacks = %v, want ErrNoRef", err)
	}
	for _, bad := range []string{"refs/pull/7/head", "main", "refs/heads/a:b", "refs/heads/*"} {
		if _, err := c.Ref(context.Background(), src, bad); err == nil || !strings.Contains(err.Error(), "invalid ref") {
			t.Errorf("Ref(%q) = %v, want an invalid ref error", bad, err)
		}
	}
}

// TestStalledFetchEnds: a server that stops answering in the middle of a
// fetch holds it no longer than FetchTimeout, and the repository fetches
// again once the server answers.
func TestStalledFetchEnds(t *testing.T) {
	o := newOrigin(t, "sekrit")
	base := o.commit("refs/heads/main", "", map[string]string{"a": "a\n"})
	c, err := NewWithOptions(t.TempDir(), Options{FetchTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	src := Source{Repo: "o/r", URL: o.url(), Token: "sekrit"}
	o.mu.Lock()
	o.stall = true
	o.mu.Unlock()
	_, err = c.Branch(context.Background(), src, "main")
	if err == nil || !strings.Contains(err.Error(), "not done within 200ms") {
		t.Fatalf("a stalled fetch: %v, want it given up after 200ms", err)
	}
	o.mu.Lock()
	o.stall = false
	o.mu.Unlock()
	got, err := c.Branch(context.Background(), src, "main")
	if err != nil || got != base {
		t.Fatalf("after the stall: %s, %v; want %s", got, err, base)
	}
}

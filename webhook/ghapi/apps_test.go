package ghapi

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
)

func testKey(t *testing.T) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// tokenServer issues installation tokens and records the Authorization
// of every other request.
type tokenServer struct {
	mu     sync.Mutex
	issued map[string]int // installation path -> tokens issued
	auths  []string
}

func (s *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/app/installations/") && strings.HasSuffix(r.URL.Path, "/access_tokens") {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			http.Error(w, "need a JWT", http.StatusUnauthorized)
			return
		}
		s.issued[r.URL.Path]++
		id := strings.Split(r.URL.Path, "/")[3]
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{
			"token":      fmt.Sprintf("ghs_inst%s_%d", id, s.issued[r.URL.Path]),
			"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		})
		return
	}
	s.auths = append(s.auths, r.URL.Path+" "+r.Header.Get("Authorization"))
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/app/installations":
		json.NewEncoder(w).Encode([]map[string]any{{"id": 7}})
	default:
		json.NewEncoder(w).Encode(map[string]any{"number": 1, "state": "open"})
	}
}

func TestAppsClients(t *testing.T) {
	ts := &tokenServer{issued: map[string]int{}}
	srv := httptest.NewServer(ts)
	defer srv.Close()
	apps, err := NewApps(42, testKey(t), srv.URL, NewTransport(TransportOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	if _, _, err := apps.App().Apps.ListInstallations(ctx, nil); err != nil {
		t.Fatalf("list installations as the App: %v", err)
	}
	c7, err := apps.Installation(7)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := c7.PullRequests.Get(ctx, "o", "r", 1); err != nil {
			t.Fatalf("get a pull request as installation 7: %v", err)
		}
	}
	again, _ := apps.Installation(7)
	if again != c7 {
		t.Error("a second Installation(7) made a new client")
	}
	c8, _ := apps.Installation(8)
	if _, _, err := c8.PullRequests.Get(ctx, "o", "r", 1); err != nil {
		t.Fatal(err)
	}
	tok, err := apps.InstallationToken(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "ghs_inst7_1" {
		t.Errorf("token of installation 7 = %q, want the cached ghs_inst7_1", tok)
	}

	ts.mu.Lock()
	defer ts.mu.Unlock()
	if n := ts.issued["/app/installations/7/access_tokens"]; n != 1 {
		t.Errorf("installation 7 got %d tokens, want 1 (cached)", n)
	}
	want := []string{
		"/app/installations Bearer ",
		"/repos/o/r/pulls/1 token ghs_inst7_1",
		"/repos/o/r/pulls/1 token ghs_inst7_1",
		"/repos/o/r/pulls/1 token ghs_inst8_1",
	}
	if len(ts.auths) != len(want) {
		t.Fatalf("requests = %q", ts.auths)
	}
	for i, w := range want {
		if !strings.HasPrefix(ts.auths[i], w) {
			t.Errorf("request %d = %q, want prefix %q", i, ts.auths[i], w)
		}
	}
}

func TestNewAppsErrors(t *testing.T) {
	key := testKey(t)
	tests := []struct {
		name string
		id   int64
		key  []byte
		url  string
		want string
	}{
		{"no app id", 0, key, "", "invalid app id"},
		{"bad key", 1, []byte("not a key"), "", "private key"},
		{"bad url", 1, key, "ftp://x", "invalid API base URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewApps(tc.id, tc.key, tc.url, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// filesServer lists n files of pull request 1, 100 a page at most, with
// GitHub's Link header; every fifth file is a rename.
func filesServer(t *testing.T, n int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/repos/o/r/pulls/1/files" {
			http.NotFound(w, r)
			return
		}
		per := 30
		fmt.Sscan(r.URL.Query().Get("per_page"), &per)
		page := 1
		fmt.Sscan(r.URL.Query().Get("page"), &page)
		from, to := (page-1)*per, min(page*per, n)
		if to < n {
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?per_page=%d&page=%d>; rel="next"`, "http://"+r.Host, r.URL.Path, per, page+1))
		}
		var out []map[string]any
		for i := from; i < to; i++ {
			f := map[string]any{"filename": fmt.Sprintf("catalog/p%04d/index.yaml", i), "status": "modified"}
			switch i % 5 {
			case 0:
				f["status"], f["previous_filename"] = "renamed", fmt.Sprintf("catalog/old%04d/index.yaml", i)
			case 1:
				f["status"] = "added"
			case 2:
				f["status"] = "removed"
			case 3:
				f["status"] = "copied"
			}
			out = append(out, f)
		}
		json.NewEncoder(w).Encode(out)
	}))
}

func TestPRFiles(t *testing.T) {
	srv := filesServer(t, 250)
	defer srv.Close()
	apps, err := NewApps(1, testKey(t), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := PRFiles(context.Background(), apps.App(), "o", "r", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 250 {
		t.Fatalf("got %d files, want all 250 across 3 pages", len(files))
	}
	byPath := map[string]change.File{}
	for _, f := range files {
		byPath[f.Path] = f
	}
	for _, tc := range []struct {
		path string
		want change.File
	}{
		{"catalog/p0000/index.yaml", change.File{Path: "catalog/p0000/index.yaml", PreviousPath: "catalog/old0000/index.yaml", Status: change.Renamed}},
		{"catalog/p0001/index.yaml", change.File{Path: "catalog/p0001/index.yaml", Status: change.Added}},
		{"catalog/p0002/index.yaml", change.File{Path: "catalog/p0002/index.yaml", Status: change.Removed}},
		{"catalog/p0003/index.yaml", change.File{Path: "catalog/p0003/index.yaml", Status: change.Added}},
		{"catalog/p0249/index.yaml", change.File{Path: "catalog/p0249/index.yaml", Status: change.Modified}},
	} {
		if got := byPath[tc.path]; got != tc.want {
			t.Errorf("%s = %+v, want %+v", tc.path, got, tc.want)
		}
	}
}

func TestPRFilesFailsClosedAtTheLimit(t *testing.T) {
	for _, n := range []int{owners.MaxFiles - 1, owners.MaxFiles} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			srv := filesServer(t, n)
			defer srv.Close()
			apps, _ := NewApps(1, testKey(t), srv.URL, nil)
			files, err := PRFiles(context.Background(), apps.App(), "o", "r", 1)
			if n < owners.MaxFiles {
				if err != nil || len(files) != n {
					t.Fatalf("%d files: got %d, %v", n, len(files), err)
				}
				return
			}
			if !errors.Is(err, ErrTooManyFiles) || files != nil {
				t.Fatalf("%d files: got %d files, err %v; want ErrTooManyFiles", n, len(files), err)
			}
		})
	}
}

func TestGraphQLURL(t *testing.T) {
	tests := []struct{ rest, want string }{
		{"https://api.github.com/", "https://api.github.com/graphql"},
		{"https://github.example.com/api/v3/", "https://github.example.com/api/graphql"},
		{"https://github.example.com/api/v3", "https://github.example.com/api/graphql"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/graphql"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.rest)
		if err != nil {
			t.Fatal(err)
		}
		if got := GraphQLURL(u).String(); got != tt.want {
			t.Errorf("GraphQLURL(%s) = %s, want %s", tt.rest, got, tt.want)
		}
	}
}

package ghapi

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestActionsPermissions: what the Action reads with its token is exactly
// what ActionsPermissions lists: every request Actions.Events makes is a
// GET of a listed endpoint, every listed endpoint is asked for, and each is
// an operation of GitHub's API description that the fake GitHub serves.
func TestActionsPermissions(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked[r.Method+" "+r.URL.Path] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("[]"))
	}))
	t.Cleanup(srv.Close)
	a := &Actions{Token: "t", APIURL: srv.URL, Repo: "o/r"}
	if _, err := a.Events(context.Background(), 7, "1111111111111111111111111111111111111111"); err != nil {
		t.Fatal(err)
	}

	// The concrete path of each endpoint for pull request 7 of o/r.
	concrete := strings.NewReplacer("{owner}", "o", "{repo}", "r", "{pull_number}", "7", "{issue_number}", "7")
	listed := map[string]string{}
	for _, p := range ActionsPermissions {
		if p.Access != "read" {
			t.Errorf("permission %s: %s, want read: the Action writes nothing through the API", p.Scope, p.Access)
		}
		for _, e := range p.Endpoints {
			listed["GET "+concrete.Replace(e)] = e
		}
	}
	for req := range asked {
		if _, ok := listed[req]; !ok {
			t.Errorf("the Action asks for %s, which no permission of ActionsPermissions lists", req)
		}
	}
	spec, err := os.ReadFile("../githubtest/testdata/github-bot.openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range slices.Sorted(maps.Keys(listed)) {
		if !asked[req] {
			t.Errorf("ActionsPermissions lists %s, which the Action never asks for", listed[req])
		}
		if !strings.Contains(string(spec), `"`+listed[req]+`"`) {
			t.Errorf("%s is not an operation of GitHub's API description", listed[req])
		}
	}
}

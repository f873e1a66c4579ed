package webhook

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestParseRegistryPush reads each registry's push notification, as each
// documents it, into the repositories pushed to; other events give none.
func TestParseRegistryPush(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
		err  string
	}{
		// The blob push and the pull in the envelope are not releases.
		{file: "distribution.json", want: []string{"registry.internal:5000/acme/foo-bundle"}},
		{file: "quay.json", want: []string{"quay.io/acme/foo-bundle"}},
		{file: "harbor.json", want: []string{"harbor.example.com/acme/foo-bundle"}},
		{file: "harbor-delete.json"},
		{file: "unknown.json", err: "not a Distribution, Quay or Harbor push notification"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "registry", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseRegistryPush(body)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ParseRegistryPush = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestRepositoryMatches(t *testing.T) {
	for _, tc := range []struct {
		pushed, watched string
		want            bool
	}{
		{"quay.io/acme/foo-bundle", "quay.io/acme/foo-bundle", true},
		{"registry.internal:5000/acme/foo-bundle", "127.0.0.1:5000/acme/foo-bundle", true},
		{"acme/foo-bundle", "quay.io/acme/foo-bundle", true},
		{"localhost/acme/foo-bundle", "quay.io/ACME/foo-bundle", true},
		{"quay.io/acme/foo-bundle", "quay.io/acme/foo-bundle-extra", false},
		{"quay.io/other/foo-bundle", "quay.io/acme/foo-bundle", false},
	} {
		if got := RepositoryMatches(tc.pushed, tc.watched); got != tc.want {
			t.Errorf("RepositoryMatches(%q, %q) = %v, want %v", tc.pushed, tc.watched, got, tc.want)
		}
	}
}

// TestRegistryHookEndpoint: off without a secret; a notification without
// the secret, or with another, is refused before its body is read; the
// secret may come as a bearer token, a bare Authorization (Harbor) or the
// query (Quay); an oversized or unreadable body is refused; a valid one
// reaches Notify.
func TestRegistryHookEndpoint(t *testing.T) {
	const secret = "a-registry-secret-of-some-length"
	quay, err := os.ReadFile(filepath.Join("testdata", "registry", "quay.json"))
	if err != nil {
		t.Fatal(err)
	}
	var notified [][]string
	serve := func(o RegistryHookOptions) *httptest.Server {
		s, err := NewServer(ServerOptions{Secrets: [][]byte{[]byte("a-webhook-secret-of-some-length")}, Queue: NewQueue(nil, QueueOptions{}), RegistryHook: o})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		t.Cleanup(hs.Close)
		return hs
	}
	notify := func(repos []string) int { notified = append(notified, repos); return 1 }
	post := func(hs *httptest.Server, query, auth string, body []byte) int {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/hooks/registry"+query, bytes.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	off := serve(RegistryHookOptions{Notify: notify})
	if code := post(off, "", "Bearer "+secret, quay); code != http.StatusNotFound {
		t.Errorf("without a configured secret: %d, want 404", code)
	}
	on := serve(RegistryHookOptions{Secret: secret, Notify: notify})
	for _, tc := range []struct {
		name, query, auth string
		body              []byte
		want              int
	}{
		{"no secret", "", "", quay, http.StatusUnauthorized},
		{"another secret", "", "Bearer " + secret + "x", quay, http.StatusUnauthorized},
		{"a prefix of the secret", "?secret=" + secret[:10], "", quay, http.StatusUnauthorized},
		{"bearer", "", "Bearer " + secret, quay, http.StatusAccepted},
		{"bare header", "", secret, quay, http.StatusAccepted},
		{"query", "?secret=" + secret, "", quay, http.StatusAccepted},
		{"oversized", "", "Bearer " + secret, bytes.Repeat([]byte(" "), MaxRegistryHookBody+1), http.StatusRequestEntityTooLarge},
		{"not JSON", "", "Bearer " + secret, []byte("push!"), http.StatusBadRequest},
	} {
		notified = nil
		if code := post(on, tc.query, tc.auth, tc.body); code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.want)
		}
		if want := tc.want == http.StatusAccepted; (len(notified) == 1) != want {
			t.Errorf("%s: notified %v", tc.name, notified)
		}
	}
}

package propose

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/propose/proposetest"
)

// TestTagListConditional: with a TagCache, a second poll of a repository
// that did not change asks with If-None-Match and takes the registry's
// 304 for the list it kept; a new tag changes the ETag and is listed.
// The registry is fronted by a proxy that gives tag lists an ETag and
// answers If-None-Match, as registries that support it do.
func TestTagListConditional(t *testing.T) {
	reg := registrytest.New(t)
	target, _ := url.Parse("http://" + reg.Host)
	var mu sync.Mutex
	var statuses []int
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if !strings.HasSuffix(resp.Request.URL.Path, "/tags/list") || resp.StatusCode != http.StatusOK {
			return nil
		}
		body, err := readAll(resp)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		resp.Header.Set("ETag", etag)
		if resp.Request.Header.Get("If-None-Match") == etag {
			resp.StatusCode, resp.Status = http.StatusNotModified, "304 Not Modified"
			body = nil
		}
		setBody(resp, body)
		mu.Lock()
		statuses = append(statuses, resp.StatusCode)
		mu.Unlock()
		return nil
	}
	front := httptest.NewServer(proxy)
	defer front.Close()
	host := strings.TrimPrefix(front.URL, "http://")

	proposetest.PushBundle(t, reg, "acme/foo-bundle", "1.1.0", "foo", "foo.v1.1.0", "1.1.0")
	rule, err := egress.New([]string{host}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := Registry{Keychain: authn.NewMultiKeychain(), Egress: rule, Tags: NewTagCache()}
	list := func() []string {
		t.Helper()
		tags, err := r.list(context.Background(), host+"/acme/foo-bundle")
		if err != nil {
			t.Fatal(err)
		}
		return tags
	}
	if got := list(); !slices.Equal(got, []string{"1.1.0"}) {
		t.Fatalf("first list %v", got)
	}
	if got := list(); !slices.Equal(got, []string{"1.1.0"}) {
		t.Fatalf("the list kept %v", got)
	}
	proposetest.PushBundle(t, reg, "acme/foo-bundle", "1.2.0", "foo", "foo.v1.2.0", "1.2.0")
	if got := list(); !slices.Equal(got, []string{"1.1.0", "1.2.0"}) {
		t.Fatalf("after a push %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(statuses, []int{200, 304, 200}) {
		t.Errorf("the registry answered the tag lists %v; want 200, 304 (unchanged), 200", statuses)
	}
}

func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func setBody(resp *http.Response, body []byte) {
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
}

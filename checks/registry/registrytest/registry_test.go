package registrytest

import (
	"net"
	"net/http"
	"testing"
	"time"
)

func TestClassifyPath(t *testing.T) {
	tests := []struct {
		path, kind, repo string
	}{
		{"/v2/", "ping", ""},
		{"/v2", "ping", ""},
		{"/v2/team/app/manifests/v1", "manifests", "team/app"},
		{"/v2/team/app/blobs/sha256:abc", "blobs", "team/app"},
		{"/v2/team/app/blobs/uploads/", "blobs", "team/app"},
		{"/v2/a/blobs/b/manifests/v1", "manifests", "a/blobs/b"},
		{"/v2/team/app/tags/list", "tags", "team/app"},
		{"/v2/_catalog", "other", ""},
		{"/healthz", "other", ""},
	}
	for _, tt := range tests {
		kind, repo := classifyPath(tt.path)
		if kind != tt.kind || repo != tt.repo {
			t.Errorf("classifyPath(%q) = %q, %q; want %q, %q", tt.path, kind, repo, tt.kind, tt.repo)
		}
	}
}

// TestPushAndFaults checks the two ways in: Registry.Push seeds past the
// faults and the counts, the package's Push goes over the network.
func TestPushAndFaults(t *testing.T) {
	r := New(t)
	r.Push(t, r.Ref("team/seeded:v1"), RandomImage(t))
	if n := len(r.Requests()); n != 0 {
		t.Fatalf("seeding made %d counted requests; want none", n)
	}
	Push(t, r.Ref("team/pushed:v1"), RandomImage(t))
	if r.CountRepo(http.MethodPut, "team/pushed") == 0 {
		t.Fatalf("Push sent no counted PUT to team/pushed: %v", r.Requests())
	}

	f := r.Fail(Fault{Repo: "team/seeded", Kind: "manifests", Status: http.StatusTooManyRequests, Times: 1})
	url := "http://" + r.Host + "/v2/team/seeded/manifests/v1"
	for i, want := range []int{http.StatusTooManyRequests, http.StatusOK} {
		req, _ := http.NewRequest(http.MethodHead, url, nil)
		req.Header.Set("Accept", "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("HEAD %d = %d; want %d", i, resp.StatusCode, want)
		}
	}
	if r.Hits(f) != 1 {
		t.Errorf("fault hits = %d; want 1 (Times: 1)", r.Hits(f))
	}
}

func TestHangupAndTarpit(t *testing.T) {
	h := NewHangup(t)
	c, err := net.Dial("tcp", h.Host)
	if err == nil {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 1))
		c.Close()
	}
	if err == nil {
		t.Error("read from a Hangup succeeded; want the connection dropped")
	}

	tp := NewTarpit(t)
	c, err = net.Dial("tcp", tp.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err = c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("read from a Tarpit = %v; want a timeout", err)
	}
	for deadline := time.Now().Add(5 * time.Second); h.Conns() != 1 || tp.Conns() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("conns: hangup %d, tarpit %d; want 1 each", h.Conns(), tp.Conns())
		}
	}
}

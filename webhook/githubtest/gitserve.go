package githubtest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
)

// gitPath splits /{owner}/{name}.git/{info/refs|git-upload-pack|git-receive-pack}.
func gitPath(p string) (owner, name, service string, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 3)
	if len(parts) != 3 || !strings.HasSuffix(parts[1], ".git") {
		return "", "", "", false
	}
	return parts[0], strings.TrimSuffix(parts[1], ".git"), parts[2], true
}

// storageLoader hands go-git's server the one repository a request is for.
type storageLoader struct{ st storer.Storer }

func (l storageLoader) Load(*transport.Endpoint) (storer.Storer, error) { return l.st, nil }

// serveGit answers git smart HTTP (fetch only) for one repository. The client authenticates as
// GitHub Apps do, with basic auth x-access-token:<installation token>. It returns the status sent.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request, owner, name, service string) int {
	fail := func(status int, msg string) int {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		}
		http.Error(w, msg, status)
		return status
	}
	s.mu.Lock()
	locked := true
	defer func() {
		if locked {
			s.mu.Unlock()
		}
	}()
	_, pass, _ := r.BasicAuth()
	in := s.tokenInstallation(pass)
	if in == nil {
		return fail(http.StatusUnauthorized, "Invalid username or token. Password authentication is not supported for Git operations.")
	}
	repo := s.repos[strings.ToLower(owner+"/"+name)]
	if repo == nil || s.installationOf(repo.Owner) != in {
		return fail(http.StatusNotFound, "Repository not found.")
	}
	ep, err := transport.NewEndpoint(repo.CloneURL())
	if err != nil {
		return fail(http.StatusInternalServerError, err.Error())
	}
	sess, err := server.NewServer(storageLoader{repo.st}).NewUploadPackSession(ep, nil)
	if err != nil {
		return fail(http.StatusInternalServerError, "opening upload-pack: "+err.Error())
	}
	var out bytes.Buffer
	switch {
	case service == "info/refs" && r.Method == http.MethodGet:
		if svc := r.URL.Query().Get("service"); svc != "git-upload-pack" {
			return fail(http.StatusForbidden, "only git-upload-pack is served, not "+svc)
		}
		ar, err := sess.AdvertisedReferencesContext(r.Context())
		if err != nil {
			return fail(http.StatusInternalServerError, "advertising refs: "+err.Error())
		}
		ar.Prefix = [][]byte{[]byte("# service=git-upload-pack"), pktline.Flush}
		if err := ar.Encode(&out); err != nil {
			return fail(http.StatusInternalServerError, "encoding refs: "+err.Error())
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
	case service == "git-upload-pack" && r.Method == http.MethodPost:
		body := io.Reader(r.Body)
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				return fail(http.StatusBadRequest, "gzip: "+err.Error())
			}
			body = zr
		}
		req, err := decodeUploadPack(body, repo.st)
		if err != nil {
			return fail(http.StatusBadRequest, "decoding upload-pack request: "+err.Error())
		}
		// The pack is encoded while the lock is held: memory storage is not safe for concurrent
		// writes from the test goroutine.
		resp, err := sess.UploadPack(context.Background(), req)
		if err != nil {
			return fail(http.StatusInternalServerError, "upload-pack: "+err.Error())
		}
		if err := resp.Encode(&out); err != nil {
			return fail(http.StatusInternalServerError, "encoding pack: "+err.Error())
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
	default:
		return fail(http.StatusForbidden, fmt.Sprintf("%s %s is not served (fetch only)", r.Method, service))
	}
	w.Header().Set("Cache-Control", "no-cache")
	// The answer is sent without the lock, so that a hook holding it
	// in the middle holds this client only.
	hook := s.gitHook
	s.mu.Unlock()
	locked = false
	w.Header().Set("Content-Length", fmt.Sprint(out.Len()))
	w.WriteHeader(http.StatusOK)
	data := out.Bytes()
	if hook != nil {
		half := len(data) / 2
		_, _ = w.Write(data[:half])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		data = data[half:]
		hook(r, service)
	}
	_, _ = w.Write(data)
	return http.StatusOK
}

// HookGit calls f on every git request the fake answers (service is
// "info/refs" or "git-upload-pack"), once the status, the headers and the
// first half of the body are sent, before the rest: for as long as f
// blocks, the client is in the middle of the transfer, as a fetch over a
// slow or stalled connection is.
func (s *Server) HookGit(f func(r *http.Request, service string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gitHook = f
}

// decodeUploadPack reads the wants, then the haves up to "done". Haves the repository does not
// hold are dropped: they cannot narrow the pack and would fail the object walk.
func decodeUploadPack(r io.Reader, st storer.EncodedObjectStorer) (*packp.UploadPackRequest, error) {
	req := packp.NewUploadPackRequest()
	if err := req.UploadRequest.Decode(r); err != nil {
		return nil, err
	}
	sc := pktline.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(string(sc.Bytes()))
		if line == "done" {
			break
		}
		if h, ok := strings.CutPrefix(line, "have "); ok && plumbing.IsHash(h) {
			hash := plumbing.NewHash(h)
			if st.HasEncodedObject(hash) == nil {
				req.Haves = append(req.Haves, hash)
			}
		}
	}
	return req, sc.Err()
}

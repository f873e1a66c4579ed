package webhook

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// MaxRegistryHookBody caps a registry notification's body. Distribution
// sends envelopes of up to its threshold of events (about 1 KiB each),
// Quay and Harbor one push per request; nothing a registry sends comes
// near it.
const MaxRegistryHookBody = 1 << 20

// RegistryHookOptions turn on /hooks/registry: a registry's push
// notification makes the App poll the watched repository at once, instead
// of at its next round. Polling stays the fallback: a notification that
// is lost or refused delays a proposal by one interval at most.
type RegistryHookOptions struct {
	// Secret is the shared secret a notification must carry: as
	// "Authorization: Bearer SECRET" or "Authorization: SECRET"
	// (Distribution's endpoint headers, Harbor's auth header), or as the
	// query parameter secret (Quay, whose notifications carry no header
	// of the sender's choosing). "" leaves the endpoint off (404).
	Secret string
	// Notify takes the pushed repositories ("host/path" when the
	// notification names its registry, else "path") and says how many
	// of the watched repositories it polls for them.
	Notify func(repos []string) int
}

// registryHook serves POST /hooks/registry.
func (s *Server) registryHook(w http.ResponseWriter, r *http.Request) {
	o := s.regHook
	if o.Secret == "" || o.Notify == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		replyText(w, http.StatusMethodNotAllowed, "POST only")
		return
	}
	if !registrySecretOK(r, o.Secret) {
		s.m.RegistryNotifications.WithLabelValues("unauthorized").Inc()
		replyText(w, http.StatusUnauthorized, "the registry notification carries no valid secret")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRegistryHookBody))
	if err != nil {
		s.m.RegistryNotifications.WithLabelValues("invalid").Inc()
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			replyText(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", MaxRegistryHookBody))
			return
		}
		replyText(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	repos, err := ParseRegistryPush(body)
	if err != nil {
		s.m.RegistryNotifications.WithLabelValues("invalid").Inc()
		replyText(w, http.StatusBadRequest, err.Error())
		return
	}
	n := 0
	if len(repos) > 0 {
		n = o.Notify(repos)
	}
	result := "ignored"
	if n > 0 {
		result = "polled"
	}
	s.m.RegistryNotifications.WithLabelValues(result).Inc()
	s.log.Info("registry notification", "repositories", repos, "polled", n)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]any{"repositories": repos, "polled": n})
}

// registrySecretOK compares the request's secret with want in constant
// time: digests of both are compared, so that not even the length leaks.
func registrySecretOK(r *http.Request, want string) bool {
	got := r.URL.Query().Get("secret")
	if h := r.Header.Get("Authorization"); h != "" {
		got = h
		if v, ok := strings.CutPrefix(h, "Bearer "); ok {
			got = v
		}
	}
	if got == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// ParseRegistryPush reads a push notification of Distribution (the
// registry's notifications envelope: push events of manifests with a
// tag), Quay (a repository push: updated_tags) or Harbor (PUSH_ARTIFACT)
// and returns the repositories pushed to, without duplicates. Events of
// other kinds (pulls, deletions, blob pushes) give none. A body that is
// none of the three is an error.
func ParseRegistryPush(body []byte) ([]string, error) {
	var probe struct {
		Events      json.RawMessage `json:"events"`
		UpdatedTags []string        `json:"updated_tags"`
		DockerURL   string          `json:"docker_url"`
		Repository  json.RawMessage `json:"repository"`
		Type        string          `json:"type"`
		EventData   json.RawMessage `json:"event_data"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, fmt.Errorf("the body is not a registry notification (JSON): %v", err)
	}
	var out []string
	add := func(s string) {
		s = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://"), "/")
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	switch {
	case probe.Events != nil:
		var events []struct {
			Action string `json:"action"`
			Target struct {
				MediaType  string `json:"mediaType"`
				Repository string `json:"repository"`
				Tag        string `json:"tag"`
			} `json:"target"`
			Request struct {
				Host string `json:"host"`
			} `json:"request"`
		}
		if err := json.Unmarshal(probe.Events, &events); err != nil {
			return nil, fmt.Errorf("events: %v", err)
		}
		for _, e := range events {
			// A manifest pushed under a tag is a release; blob
			// pushes and pulls are not.
			if e.Action != "push" || e.Target.Tag == "" || e.Target.Repository == "" {
				continue
			}
			if e.Request.Host != "" {
				add(e.Request.Host + "/" + e.Target.Repository)
			} else {
				add(e.Target.Repository)
			}
		}
	case probe.UpdatedTags != nil || probe.DockerURL != "":
		if len(probe.UpdatedTags) == 0 {
			return nil, nil
		}
		if probe.DockerURL != "" {
			add(probe.DockerURL)
			break
		}
		var name string
		if json.Unmarshal(probe.Repository, &name) != nil || name == "" {
			return nil, errors.New("a Quay notification without docker_url or repository")
		}
		add(name)
	case probe.Type != "" && probe.EventData != nil:
		if probe.Type != "PUSH_ARTIFACT" && probe.Type != "pushImage" {
			return nil, nil
		}
		var data struct {
			Resources []struct {
				Tag         string `json:"tag"`
				ResourceURL string `json:"resource_url"`
			} `json:"resources"`
			Repository struct {
				RepoFullName string `json:"repo_full_name"`
			} `json:"repository"`
		}
		if err := json.Unmarshal(probe.EventData, &data); err != nil {
			return nil, fmt.Errorf("event_data: %v", err)
		}
		for _, r := range data.Resources {
			if r.Tag == "" {
				continue
			}
			// resource_url is host/path:tag (or @digest).
			ref := r.ResourceURL
			if i := strings.LastIndex(ref, "@"); i >= 0 {
				ref = ref[:i]
			}
			if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
				ref = ref[:i]
			}
			if ref == "" {
				ref = data.Repository.RepoFullName
			}
			add(ref)
		}
	default:
		return nil, errors.New("the body is not a Distribution, Quay or Harbor push notification")
	}
	return out, nil
}

// RepositoryMatches reports whether a pushed repository, as
// ParseRegistryPush gives it, is the watched one ("host/path"): the same
// path, whatever host each names. A registry names itself as its pushers
// reach it (localhost:5000, an internal name), rarely as the policy does;
// a path matched on another registry costs one poll and proposes nothing.
func RepositoryMatches(pushed, watched string) bool {
	return repoPath(pushed) == repoPath(watched)
}

// repoPath is a repository without its registry host: the first part is
// a host when it has a dot or a port, or is localhost, as docker reads
// image names.
func repoPath(repo string) string {
	repo = strings.ToLower(repo)
	if first, rest, ok := strings.Cut(repo, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return rest
	}
	return repo
}

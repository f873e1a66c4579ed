package webhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestAppManifest holds deploy/app-manifest.json to the service: the App
// asks for the permissions the reconciler needs and no more, and
// subscribes to every event Route turns into work (the installation events
// come to every App without a subscription).
func TestAppManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "deploy", "app-manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Permissions map[string]string `json:"default_permissions"`
		Events      []string          `json:"default_events"`
		Hook        struct {
			URL string `json:"url"`
		} `json:"hook_attributes"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("deploy/app-manifest.json: %v", err)
	}
	want := map[string]string{"checks": "write", "contents": "write", "pull_requests": "write", "issues": "write", "metadata": "read"}
	if len(m.Permissions) != len(want) {
		t.Errorf("permissions = %v, want exactly %v", m.Permissions, want)
	}
	for k, v := range want {
		if m.Permissions[k] != v {
			t.Errorf("permission %s = %q, want %q", k, m.Permissions[k], v)
		}
	}
	subscribed := map[string]bool{"installation": true, "installation_repositories": true}
	for _, e := range m.Events {
		if !Allowed(e) {
			t.Errorf("the manifest subscribes to %s, which the service ignores", e)
		}
		subscribed[e] = true
	}
	for _, e := range []string{"pull_request", "issue_comment", "pull_request_review", "check_run", "check_suite", "push", "installation", "installation_repositories"} {
		if !Allowed(e) {
			t.Errorf("Route does not take %s", e)
		}
		if !subscribed[e] {
			t.Errorf("the manifest does not subscribe to %s", e)
		}
	}
	if !slices.IsSorted(m.Events) {
		t.Errorf("events are not sorted: %v", m.Events)
	}
	if filepath.Base(m.Hook.URL) != "webhook" {
		t.Errorf("hook URL %q does not end in /webhook", m.Hook.URL)
	}
}

package main

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// check inspects stdout.
		check func(t *testing.T, stdout string)
	}{
		{"--version", []string{"--version"}, func(t *testing.T, out string) {
			if out != "catalogbot version dev\n" {
				t.Errorf("--version printed %q", out)
			}
		}},
		{"text", []string{"version"}, func(t *testing.T, out string) {
			lines := strings.Split(out, "\n")
			if lines[0] != "catalogbot version dev" || !strings.Contains(out, "\ngo: go1.") {
				t.Errorf("version printed:\n%s", out)
			}
			if !strings.Contains(out, "\ngithub.com/google/go-containerregistry v") {
				t.Errorf("version does not name the registry client's version:\n%s", out)
			}
		}},
		{"json", []string{"version", "-o", "json"}, func(t *testing.T, out string) {
			var v versionInfo
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("%v in %s", err, out)
			}
			if v.Version != "dev" || !strings.HasPrefix(v.GoVersion, "go1.") || len(v.Modules) == 0 {
				t.Errorf("version -o json = %+v", v)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, nil, tt.args...)
			if r.code != exitOK {
				t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
			}
			tt.check(t, r.stdout)
		})
	}
	if r := cli(t, nil, "version", "-o", "yaml"); r.code != exitError || !strings.Contains(r.stderr, `invalid --output value "yaml"`) {
		t.Errorf("version -o yaml: exit %d, stderr %s", r.code, r.stderr)
	}
}

func TestBuildCommit(t *testing.T) {
	const rev = "9be7509e1f3c0c4d8d7e2b8f0a4c5b6d7e8f9a0b"
	tests := []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{"clean checkout", []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, rev},
		{"changed checkout", []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: rev}}, rev + "-dirty"},
		{"go install module@version", []debug.BuildSetting{{Key: "-trimpath", Value: "true"}}, ""},
		{"modified without a revision", []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildCommit(&debug.BuildInfo{Settings: tt.settings}); got != tt.want {
				t.Errorf("buildCommit = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLinkedCommit checks that the commit the release links in wins over
// whatever Go recorded, which a build with -buildvcs=false lacks.
func TestLinkedCommit(t *testing.T) {
	const linked = "25f4eb9c0c4d8d7e2b8f0a4c5b6d7e8f9a0b1c2d"
	if got := readVersionInfo("v1.2.3", linked); got.Commit != linked || got.Version != "v1.2.3" {
		t.Errorf("readVersionInfo = %+v, want commit %s", got, linked)
	}
	var out strings.Builder
	if err := writeVersion(&out, readVersionInfo("v1.2.3", linked), "text"); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(out.String(), "\n"); lines[1] != "commit: "+linked {
		t.Errorf("version printed:\n%s", out.String())
	}
}

func TestReleaseVersion(t *testing.T) {
	tests := []struct {
		linked, module, want string
	}{
		{"v1.2.0", "v1.1.0", "v1.2.0"}, // -ldflags wins
		{"dev", "v1.1.0", "v1.1.0"},    // go install module@version
		{"dev", "(devel)", "dev"},      // a build from a checkout
		{"dev", "", "dev"},
	}
	for _, tt := range tests {
		bi := &debug.BuildInfo{Main: debug.Module{Version: tt.module}}
		if got := releaseVersion(tt.linked, bi); got != tt.want {
			t.Errorf("releaseVersion(%q, %q) = %q, want %q", tt.linked, tt.module, got, tt.want)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

// hangingRegistry accepts connections on 127.0.0.1, never answers, and
// calls onAccept once, for the first connection: the moment a command is
// surely in the middle of its run.
func hangingRegistry(t *testing.T, onAccept func()) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for first := true; ; first = false {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			if first {
				onAccept()
			}
		}
	}()
	return ln.Addr().String()
}

// TestInterrupt cancels runs while they wait on a registry, as Ctrl-C
// does, and checks that they say "interrupted", exit 130 and leave the
// output as it was.
func TestInterrupt(t *testing.T) {
	isolateCredentials(t)
	tests := []struct {
		name string
		args func(host, yamlPath, out string) []string
	}{
		{"publish", func(host, _, out string) []string {
			return []string{"publish", "--catalog", validDir, "--image", "oci:" + out, "--base", host + "/example/opm:v1", "--insecure-registry", host}
		}},
		{"rebuild", func(host, yamlPath, out string) []string {
			return []string{"rebuild", yamlPath, "--image", "oci:" + out, "--base", "scratch", "--insecure-registry", host}
		}},
		{"assemble", func(host, yamlPath, out string) []string {
			return []string{"assemble", yamlPath, "-o", out, "--insecure-registry", host}
		}},
		{"images verify", func(host, yamlPath, _ string) []string {
			return []string{"images", "verify", "--catalog-yaml", yamlPath, "--insecure-registry", host}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			host := hangingRegistry(t, cancel)
			yamlPath := writeCatalogYAML(t, fmt.Sprintf("name: c\nreferences:\n- name: one\n  image: %s/example/catalog:v1\n", host))
			out := filepath.Join(t.TempDir(), "out")
			// An existing output must survive as it is.
			if err := os.MkdirAll(filepath.Join(out, "c"), 0o755); err != nil {
				t.Fatal(err)
			}

			t.Chdir(repoRoot)
			var stdout, stderr bytes.Buffer
			a := &app{stdout: &stdout, stderr: &stderr, version: "dev", validate: fbc.Validate}
			code := execute(ctx, a, tt.args(host, yamlPath, out))
			if code != exitInterrupted || stderr.String() != "catalogbot: interrupted\n" && !strings.HasSuffix(stderr.String(), "\ncatalogbot: interrupted\n") {
				t.Errorf("exit %d, stderr:\n%s\nwant 130 and \"catalogbot: interrupted\" last", code, stderr.String())
			}
			if strings.Contains(stderr.String(), "transport") {
				t.Errorf("an interruption was reported as a transport failure:\n%s", stderr.String())
			}
			entries, err := os.ReadDir(out)
			if err != nil || len(entries) != 1 || entries[0].Name() != "c" {
				t.Errorf("output changed: %v %v", entries, err)
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".out.*")); len(left) > 0 {
				t.Errorf("temporary directories left beside the output: %v", left)
			}
		})
	}
}

// TestInterruptSignal sends SIGINT, then SIGTERM, to catalogbot running as
// a process (this test binary, which runs main's code under runMainEnv)
// while it waits on a registry.
func TestInterruptSignal(t *testing.T) {
	isolateCredentials(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			started := make(chan struct{})
			host := hangingRegistry(t, func() { close(started) })
			yamlPath := writeCatalogYAML(t, fmt.Sprintf("name: c\nreferences:\n- name: one\n  image: %s/example/catalog:v1\n", host))
			out := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command(os.Args[0], "assemble", yamlPath, "-o", out, "--insecure-registry", host)
			cmd.Env = append(os.Environ(), runMainEnv+"=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			<-started
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Errorf("exit %v, want status 130; stderr:\n%s", err, stderr.String())
			}
			if !strings.HasSuffix(stderr.String(), "catalogbot: interrupted\n") {
				t.Errorf("stderr does not end with \"catalogbot: interrupted\":\n%s", stderr.String())
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output %s was created: %v", out, err)
			}
		})
	}
}

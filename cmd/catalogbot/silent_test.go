package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/timeout"
)

// silentRegistry accepts connections on 127.0.0.1 and never writes a byte:
// a registry behind a hung proxy. It returns the host:port and a count of
// the connections it accepted.
func silentRegistry(t *testing.T) (string, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(conns)
	}
}

// TestSilentRegistry checks that every command that reaches a registry
// gives up on one that never answers, says it is a transport failure and
// names the registry, and leaves its output alone. Without the bounded
// transport each of these would wait forever (until go test's timeout).
func TestSilentRegistry(t *testing.T) {
	isolateCredentials(t)
	t.Setenv(timeout.EnvTimeout, "200ms")
	host, accepted := silentRegistry(t)
	dir := t.TempDir()
	yamlPath := writeCatalogYAML(t, fmt.Sprintf("name: c\nreferences:\n- name: one\n  image: %s/example/catalog:v1\n", host))
	out := filepath.Join(dir, "out")

	tests := []struct {
		name string
		args []string
		// wantCode is 1 where the command reports failed references as
		// findings (assemble, render, images verify), 2 where a
		// registry failure stops it (publish), and 3 for rebuild, whose
		// scheduler retries a registry that did not answer.
		wantCode int
	}{
		{"publish", []string{"publish", "--catalog", validDir, "--image", "oci:" + out, "--base", host + "/example/opm:v1", "--insecure-registry", host}, exitError},
		{"rebuild", []string{"rebuild", yamlPath, "--image", "oci:" + out, "--base", "scratch", "--insecure-registry", host}, exitRetry},
		{"assemble", []string{"assemble", yamlPath, "-o", out, "--insecure-registry", host}, exitInvalid},
		{"render", []string{"render", host + "/example/catalog:v1"}, exitInvalid},
		{"images verify", []string{"images", "verify", "--catalog-yaml", yamlPath, "--insecure-registry", host}, exitInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := accepted()
			r := cli(t, nil, tt.args...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tt.wantCode, r.stderr)
			}
			all := r.stdout + r.stderr
			if !strings.Contains(all, "transport") || !strings.Contains(all, host) {
				t.Errorf("output does not say transport and name %s:\n%s%s", host, r.stdout, r.stderr)
			}
			// One connection for https and one for the plain-HTTP
			// fallback: a registry silent for the whole wait is not
			// asked again, so a command gives up within one timeout
			// per scheme rather than a multiple of it.
			if n := accepted() - before; n == 0 || n > 2 {
				t.Errorf("%d connections to the silent registry, want 1 or 2", n)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output %s was touched: %v", out, err)
			}
		})
	}
}

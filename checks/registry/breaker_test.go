package registry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/egress"
)

// TestBreaker: a timeout opens the breaker for its registry only; other
// failures do not.
func TestBreaker(t *testing.T) {
	var b Breaker
	if b.Record("a.example", errors.New("connection refused")) || b.Check("a.example") != nil {
		t.Fatal("a failure that is not a timeout opened the breaker")
	}
	if !b.Record("slow.example", fmt.Errorf("HEAD: %w", context.DeadlineExceeded)) {
		t.Fatal("a deadline did not open the breaker")
	}
	err := b.Check("slow.example")
	var be *BreakerError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "slow.example") {
		t.Errorf("Check = %v, want a BreakerError naming slow.example", err)
	}
	if class, _ := Classify(err); class != ClassTransport {
		t.Errorf("an open breaker is %s, want transport", class)
	}
	if b.Check("a.example") != nil {
		t.Error("the breaker opened for another registry")
	}
	var none *Breaker
	if none.Record("x", context.DeadlineExceeded) || none.Check("x") != nil {
		t.Error("a nil breaker opened")
	}
}

// TestBreakerOverHosts: a pass's breaker over the process's Hosts teaches
// the next pass: a timeout in one opens the host for the other, whose
// Check names the host and when it is asked again.
func TestBreakerOverHosts(t *testing.T) {
	hosts := NewHosts(HostsOptions{})
	first, next := &Breaker{Hosts: hosts}, &Breaker{Hosts: hosts}
	if next.Check("slow.example") != nil {
		t.Fatal("open before any failure")
	}
	first.Record("slow.example", fmt.Errorf("GET: %w", context.DeadlineExceeded))
	err := next.Check("slow.example")
	var open *HostOpenError
	if !errors.As(err, &open) || !strings.Contains(err.Error(), "slow.example") || !strings.Contains(err.Error(), "asked again after") {
		t.Fatalf("the next pass's Check = %v, want the host open, naming it and when it is asked again", err)
	}
	if next.Check("other.example") != nil {
		t.Error("another host opened")
	}
}

// TestClassifyRefusedAndBodies: a refusal of the egress rule is a policy
// failure in the rule's words; an unusable answer quotes no more than its
// first line, where libraries put the server's body after.
func TestClassifyRefusedAndBodies(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "http://internal.test:8080/token", Err: &egress.RefusedError{Host: "internal.test", Kind: egress.KindLoopback}}
	class, msg := Classify(refused)
	if class != ClassPolicy || strings.Contains(msg, "8080") || !strings.Contains(msg, "internal.test") {
		t.Errorf("refused: %s %q, want policy naming the host without its port", class, msg)
	}
	proxied := &url.Error{Op: "Get", URL: "https://quay.io/v2/", Err: &egress.ProxyError{Proxy: "proxy.internal:3128"}}
	class, msg = Classify(proxied)
	if class != ClassTransport || !strings.Contains(msg, "proxy.internal:3128") || !strings.Contains(msg, "--registry-proxy") {
		t.Errorf("environment proxy: %s %q, want transport naming the proxy and how to name one", class, msg)
	}
	class, msg = Classify(errors.New("no token in bearer response:\n{\"secret\": \"INTERNAL-SECRET\"}"))
	if class != ClassTransport || strings.Contains(msg, "INTERNAL-SECRET") {
		t.Errorf("body: %s %q, want transport without the body", class, msg)
	}
}

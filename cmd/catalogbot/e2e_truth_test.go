//go:build e2e

package main

import (
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

// TestE2ETruthfulness is TestCheckTruthfulness against Debian's
// docker-registry (the CNCF distribution registry) on 127.0.0.1: the
// bundle images are pushed to it, and catalogbot check pulls them by
// digest through the egress rule, as from any registry. Run it with make
// e2e.
func TestE2ETruthfulness(t *testing.T) {
	checkTruthfulness(t, registrytest.StartDockerRegistry(t))
}

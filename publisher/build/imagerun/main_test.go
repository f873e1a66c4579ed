package imagerun_test

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// opmBin is opm built from operator-registry v1.65.0 for this run.
var opmBin string

// staticWhy, when set, says why opmBin is a static binary, so that the
// tests of a dynamic opm (TestOPMDynamic) cannot run.
var staticWhy string

// TestMain builds opm once for every test and benchmark: as opm is
// released, with cgo and the json1 and containers_image_openpgp tags, but
// linked dynamically, so that the base made from it also exercises the
// build's use of a base's own loader and libraries. Without a C compiler
// it builds opm without cgo, static, and TestOPMDynamic says so (and
// fails under CI=true). CATALOGBOT_TEST_OPM names an opm built so
// already, for a run that cannot build (another user, no module cache).
func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if opmBin = os.Getenv("CATALOGBOT_TEST_OPM"); opmBin != "" {
		fmt.Fprintf(os.Stderr, "imagerun: using opm %s (CATALOGBOT_TEST_OPM)\n", opmBin)
		if !isDynamic(opmBin) {
			staticWhy = "CATALOGBOT_TEST_OPM names a static opm"
		}
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "catalogbot-imagerun-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	opmBin = filepath.Join(dir, "opm")
	start := time.Now()
	cgo := "CGO_ENABLED=1"
	if why := noCCompiler(); why != "" {
		staticWhy = why
		cgo = "CGO_ENABLED=0"
		fmt.Fprintf(os.Stderr, "imagerun: %s: building opm without cgo (static); TestOPMDynamic will not run\n", why)
	}
	cmd := exec.Command("go", "build", "-tags", "json1 containers_image_openpgp", "-o", opmBin,
		"github.com/operator-framework/operator-registry/cmd/opm")
	cmd.Env = append(os.Environ(), cgo)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build opm (%s): %v\n%s", cgo, err, out)
		return 1
	}
	fmt.Fprintf(os.Stderr, "imagerun: built opm v1.65.0 (%s) in %s\n", cgo, time.Since(start).Round(100*time.Millisecond))
	return m.Run()
}

// noCCompiler says why cgo cannot build here ("" when it can): the C
// compiler go would call (go env CC) is not on PATH.
func noCCompiler() string {
	out, err := exec.Command("go", "env", "CC").Output()
	if err != nil {
		return fmt.Sprintf("go env CC: %v", err)
	}
	cc := strings.Fields(string(out))
	if len(cc) == 0 {
		return "go env CC names no C compiler"
	}
	if _, err := exec.LookPath(cc[0]); err != nil {
		return fmt.Sprintf("no C compiler (go env CC is %q, not found)", cc[0])
	}
	return ""
}

// isDynamic tells whether the ELF file at p asks for a loader.
func isDynamic(p string) bool {
	f, err := elf.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}

// TestOPMDynamic checks that the opm the other tests run is dynamic, as
// released opm images hold it, so that they exercise the build running a
// base's opm with the base's own loader and libraries. Without a C
// compiler opm is static and that path goes untested: the test says so,
// and fails under CI=true, where a C compiler is part of the set-up.
func TestOPMDynamic(t *testing.T) {
	if staticWhy != "" {
		msg := staticWhy + ": opm is static, so a base's own loader and libraries are not exercised; install a C compiler (Debian: gcc) to test them"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if !isDynamic(opmBin) {
		t.Fatalf("%s was built with cgo but has no loader (PT_INTERP)", opmBin)
	}
}

// catalogDir is the main module's valid catalog.
const catalogDir = "../../../testdata/catalogs/valid"

// opmBaseImage is an opm image made from opmBin the way the opm release
// images are made: /bin/opm as the entrypoint, a world-writable /tmp, and
// user 1001. When this opm is dynamic, the base also holds its loader and
// libraries, taken from this host at the paths they have here (links
// included), as a distroless base would hold them.
func opmBaseImage(t testing.TB) v1.Image {
	t.Helper()
	opm, err := os.ReadFile(opmBin)
	if err != nil {
		t.Fatal(err)
	}
	libs := &layerBuilder{}
	f, err := elf.Open(opmBin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			data, err := io.ReadAll(p.Open())
			if err != nil {
				t.Fatal(err)
			}
			libs.hostFile(t, strings.TrimRight(string(data), "\x00"))
		}
	}
	need, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(need) > 0 {
		lib := need[0]
		need = need[1:]
		if seen[lib] {
			continue
		}
		seen[lib] = true
		p := hostLib(t, lib)
		libs.hostFile(t, p)
		lf, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		more, _ := lf.ImportedLibraries()
		lf.Close()
		need = append(need, more...)
	}

	top := &layerBuilder{}
	top.dir("bin/", 0o755)
	top.file("bin/opm", 0o755, opm)
	top.dir("tmp/", 0o1777)

	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.DockerManifestSchema2), libs.layer(t), top.layer(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config.User = "1001"
	cfg.Config.Entrypoint = []string{"/bin/opm"}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// hostLib finds a shared library where the loader of this host would.
func hostLib(t testing.TB, lib string) string {
	t.Helper()
	for _, d := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
		"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
		p := path.Join(d, lib)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("opm needs %s, which this host does not have", lib)
	return ""
}

package conformance_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/fbc/conformance/errtree"
	"github.com/catalogbot/catalogbot/checks/fbc/conformance/mutate"
	"github.com/catalogbot/catalogbot/checks/fbc/conformance/opmref"
)

// mutationSeed seeds every random choice of the mutation generator.
const mutationSeed = 0x0b5e55ed

// maxDetailed bounds how many mismatches are printed in full; the rest are
// counted. Set CONFORMANCE_VERBOSE=1 to print all of them, and
// CONFORMANCE_CASE=<substring> to run only matching mutation cases.
const maxDetailed = 25

// TestGoldenParity runs every case of the golden file (opm master) through
// the v1.65.0 oracle and through fbc.Validate. Ours must match the oracle,
// except for the listed cases whose behaviour changed after v1.65.0: for
// those, ours must match the golden file (master) instead.
func TestGoldenParity(t *testing.T) {
	cases := readGolden(t)
	for _, name := range sortedKeys(goldenExceptions) {
		t.Logf("v1.65.0 exception %-26s %s", name, goldenExceptions[name])
	}
	seen := map[string]bool{}
	for _, gc := range cases {
		seen[gc.Name] = true
		t.Run(gc.Name, func(t *testing.T) {
			fsys := mapFS(gc.Files)
			ref := opmref.Run(fsys, 1)
			got := ours(fsys)
			golden := verdict{gc.RC, gc.Message}
			oracleIsGolden := ref.RC == gc.RC && errtree.Equal(ref.Message, gc.Message)

			if reason, ok := goldenExceptions[gc.Name]; ok {
				if oracleIsGolden {
					t.Errorf("listed as a v1.65.0 exception (%s) but the oracle reproduces the golden result; remove it from goldenExceptions", reason)
				}
				// Master is the target: compare with the golden file.
				if got.rc != golden.rc || !errtree.Equal(got.msg, golden.msg) {
					t.Errorf("v1.65.0 exception (%s): ours differs from the golden (master) result\nfiles:\n%s\ngolden rc=%d:\n%s\nours rc=%d:\n%s",
						reason, describeFiles(gc.Files), golden.rc, golden.msg, got.rc, got.msg)
				}
				return
			}
			if !oracleIsGolden {
				t.Errorf("the v1.65.0 oracle does not reproduce the golden result (a version difference missing from goldenExceptions?)\ngolden rc=%d:\n%s\noracle rc=%d:\n%s",
					gc.RC, gc.Message, ref.RC, ref.Message)
			}
			if got.rc != ref.RC {
				t.Errorf("verdict differs: oracle rc=%d, ours rc=%d\nfiles:\n%s\noracle message:\n%s\nours message:\n%s",
					ref.RC, got.rc, describeFiles(gc.Files), ref.Message, got.msg)
				return
			}
			if ref.RC == 0 {
				return
			}
			if nd := nondeterministic(gc.Files, ref); nd != "" {
				t.Logf("message not compared: %s", nd)
				return
			}
			if !errtree.Equal(ref.Message, got.msg) {
				t.Errorf("message differs\nfiles:\n%s\noracle:\n%s\nours:\n%s", describeFiles(gc.Files), ref.Message, got.msg)
			}
		})
	}
	for name := range goldenExceptions {
		if !seen[name] {
			t.Errorf("goldenExceptions lists %q, which is not in the golden file", name)
		}
	}
}

// TestCorpusParity validates every catalogs/v4.x directory of the real
// community-operators-prod corpus with both sides (each version directory is
// one catalog). opm accepts all of them. With -short only three versions
// are validated.
func TestCorpusParity(t *testing.T) {
	versions := corpusVersions(t)
	if testing.Short() {
		// One version per bundle payload style (olm.bundle.object up to
		// v4.16, olm.csv.metadata from v4.17) plus the newest.
		var some []string
		for _, v := range versions {
			switch filepath.Base(v) {
			case "v4.12", "v4.17", "v4.22":
				some = append(some, v)
			}
		}
		t.Logf("-short: validating %d of %d versions", len(some), len(versions))
		versions = some
	}
	// Two versions at a time: the oracle alone leaves part of a second core
	// idle, and go test's -parallel defaults to GOMAXPROCS.
	for _, v := range versions {
		name := filepath.Base(v)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fsys := os.DirFS(v)
			start := time.Now()
			// opm's default concurrency: the corpus is valid, so the
			// load order cannot change the verdict.
			ref := opmref.Run(fsys, 0)
			refTime := time.Since(start)
			start = time.Now()
			got := ours(fsys)
			ourTime := time.Since(start)
			t.Logf("%s: oracle rc=%d in %.2fs, ours rc=%d in %.2fs", name, ref.RC, refTime.Seconds(), got.rc, ourTime.Seconds())
			if ref.RC != 0 {
				t.Errorf("the oracle rejects %s, which opm accepts: %s", name, ref.Message)
			}
			if got.rc != ref.RC {
				t.Errorf("verdict differs on %s: oracle rc=%d, ours rc=%d\noracle:\n%s\nours:\n%s", name, ref.RC, got.rc, ref.Message, got.msg)
			} else if ref.RC != 0 && !errtree.Equal(ref.Message, got.msg) {
				t.Errorf("message differs on %s\noracle:\n%s\nours:\n%s", name, ref.Message, got.msg)
			}
		})
	}
}

// corpusVersions unpacks the shared corpus (community-operators-prod) into
// a temporary directory and returns its catalogs/v4.* directories, sorted;
// it skips the test where the corpus or tar --zstd is not available.
func corpusVersions(t *testing.T) []string {
	t.Helper()
	tarball, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "shared", "corpus", "community-operators-prod.tar.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tarball); err != nil {
		t.Skipf("the shared corpus is not available (%v): it lives in ../shared beside the project, which a bare clone does not have", err)
	}
	for _, tool := range []string{"tar", "zstd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; unpacking the corpus needs `tar --zstd`", tool)
		}
	}
	dir := t.TempDir()
	if out, err := exec.Command("tar", "--zstd", "-xf", tarball, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", tarball, err, out)
	}
	var versions []string
	for _, pattern := range []string{"catalogs/v4.*", "*/catalogs/v4.*"} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, m...)
	}
	sort.Strings(versions)
	if len(versions) == 0 {
		t.Fatalf("no catalogs/v4.* directories in %s", tarball)
	}
	return versions
}

// loadSeeds returns the seed catalogs in testdata/seeds plus every valid
// case of the golden file.
func loadSeeds(t *testing.T) []mutate.Seed {
	t.Helper()
	seeds, err := mutate.SeedsFromFS(os.DirFS("testdata/seeds"), "")
	if err != nil {
		t.Fatalf("read seeds: %v", err)
	}
	if len(seeds) == 0 {
		t.Fatalf("no seeds in testdata/seeds")
	}
	for _, gc := range readGolden(t) {
		if gc.RC == 0 {
			seeds = append(seeds, mutate.Seed{Name: "golden:" + gc.Name, Files: gc.Files})
		}
	}
	return seeds
}

type mismatch struct {
	c    mutate.Case
	kind string
	ref  opmref.Outcome
	want string
	got  verdict
}

// TestMutationParity generates mutations of valid catalogs and compares the
// oracle with fbc.Validate on each: the exit code always, and the message
// when opm's choice of message is deterministic.
func TestMutationParity(t *testing.T) {
	seeds := loadSeeds(t)
	for _, s := range seeds {
		if ref := opmref.Run(mapFS(mutate.Render(s)), 1); ref.RC != 0 {
			t.Fatalf("seed %s is not valid after parsing and re-rendering: %s", s.Name, ref.Message)
		}
	}
	cases := mutate.Generate(seeds, mutate.Options{Seed: mutationSeed, Reps: 1, Combos: 20})
	if len(cases) < 1000 {
		t.Fatalf("only %d mutation cases generated, want at least 1000", len(cases))
	}
	t.Logf("%d seed catalogs (%d after removing identical renderings), %d mutations (kind:variant)",
		len(seeds), countSeeds(cases), len(mutate.Mutations()))
	filter := os.Getenv("CONFORMANCE_CASE")
	verbose := os.Getenv("CONFORMANCE_VERBOSE") != ""

	var (
		run, valid, invalid, compared int
		excluded                      = map[string]int{}
		translated                    int
		notCompared                   = map[string]int{}
		mismatches                    []mismatch
	)
	start := time.Now()
	for _, c := range cases {
		if filter != "" && !strings.Contains(c.Name, filter) {
			continue
		}
		run++
		fsys := mapFS(c.Files)
		ref := opmref.Run(fsys, 1)
		if reason, tr := v165Exception(ref); reason != "" {
			excluded[reason]++
			continue
		} else if tr != "" {
			translated++
			ref.Message = tr
		}
		if ref.RC == 0 {
			valid++
		} else {
			invalid++
		}
		got := ours(fsys)
		if got.rc != ref.RC {
			mismatches = append(mismatches, mismatch{c: c, kind: "verdict", ref: ref, want: ref.Message, got: got})
			continue
		}
		if ref.RC == 0 {
			continue
		}
		if nd := nondeterministic(c.Files, ref); nd != "" {
			notCompared[nd]++
			continue
		}
		compared++
		if !errtree.Equal(ref.Message, got.msg) {
			mismatches = append(mismatches, mismatch{c: c, kind: "message", ref: ref, want: ref.Message, got: got})
		}
	}
	t.Logf("%d mutation cases (%d generated) in %.1fs: oracle says %d valid, %d invalid; %d messages compared",
		run, len(cases), time.Since(start).Seconds(), valid, invalid, compared)
	for _, r := range sortedKeys(excluded) {
		t.Logf("excluded, v1.65.0 differs from master: %4d × %s", excluded[r], r)
	}
	if translated > 0 {
		t.Logf("compared after rewriting v1.65.0's C24 wording to master's: %d", translated)
	}
	for _, r := range sortedKeys(notCompared) {
		t.Logf("message not compared (verdict was), opm is nondeterministic: %4d × %s", notCompared[r], r)
	}
	if len(mismatches) == 0 {
		return
	}

	byKind := map[string]int{}
	for i, mm := range mismatches {
		for _, k := range mm.c.Mutations {
			byKind[mm.kind+" "+k]++
		}
		if i < maxDetailed || verbose {
			t.Errorf("%s mismatch in case %s\nfiles:\n%s\noracle rc=%d (phase %s):\n%s\nours rc=%d:\n%s",
				mm.kind, mm.c.Name, describeFiles(mm.c.Files), mm.ref.RC, mm.ref.Phase, mm.want, mm.got.rc, mm.got.msg)
		}
	}
	var summary strings.Builder
	for _, k := range sortedKeys(byKind) {
		fmt.Fprintf(&summary, "\n%5d  %s", byKind[k], k)
	}
	t.Errorf("%d of %d cases differ (%d shown in full; CONFORMANCE_VERBOSE=1 shows all). By mismatch and mutation kind:%s",
		len(mismatches), run, min(len(mismatches), maxDetailed), summary.String())
}

func countSeeds(cases []mutate.Case) int {
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.Seed] = true
	}
	return len(seen)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

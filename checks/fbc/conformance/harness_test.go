package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/conformance/errtree"
	"github.com/catalogbot/catalogbot/checks/fbc/conformance/opmref"
)

// ---- running both sides ----

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for p, c := range files {
		m[p] = &fstest.MapFile{Data: []byte(c), Mode: 0o644}
	}
	return m
}

// verdict is one side's answer: opm's exit code and error.message.
type verdict struct {
	rc  int
	msg string
}

// selfTest, set by CONFORMANCE_SELFTEST=1, replaces the library under test
// with the oracle itself, reading in-memory catalogs in a file order of its
// own (none of the orders nondeterministic() tries) and with C24 rewritten to
// master's wording. It checks the harness: the nondeterminism detection and
// the exception handling must then leave only the golden exceptions (for
// which master, not v1.65.0, is the reference) failing.
var selfTest = os.Getenv("CONFORMANCE_SELFTEST") != ""

// ours runs the library under test. A panic or a returned error is turned
// into a verdict that cannot match the oracle, with the reason as message.
func ours(fsys fs.FS) (v verdict) {
	if selfTest {
		if m, ok := fsys.(fstest.MapFS); ok {
			fsys = orderedFS{m, hashedKey("selftest")}
		}
		o := opmref.Run(fsys, 0)
		if t, ok := translateC24(o.Message); ok {
			o.Message = t
		}
		return verdict{o.RC, o.Message}
	}
	defer func() {
		if r := recover(); r != nil {
			v = verdict{rc: -1, msg: fmt.Sprintf("PANIC in fbc.Validate: %v", r)}
		}
	}()
	res, err := fbc.Validate(context.Background(), fsys, fbc.Options{})
	if err != nil {
		return verdict{rc: -1, msg: "fbc.Validate returned an error: " + err.Error()}
	}
	if res == nil {
		return verdict{rc: -1, msg: "fbc.Validate returned a nil result"}
	}
	if res.Valid() {
		return verdict{rc: 0}
	}
	return verdict{rc: 1, msg: res.OPMMessage}
}

// ---- the v1.65.0 exceptions (spec §9) ----

// The oracle is operator-registry v1.65.0; the golden file and the spec
// describe opm master (v1.73.0+). These are the rules that changed in
// between and that a catalog can reach.
const (
	exM14 = "M14: skipRange is parsed with blang ParseRange since v1.69.0; v1.65.0 accepts any skipRange, so the `invalid skipRange` leaf is missing"
	exC17 = "C17: release parsing was reworked in v1.68.0; v1.65.0 parses \"0.0.0-<release>\" (no 20-character limit, no `invalid release ...: segment <i>:` wording, an extra `cannot contain build metadata` error)"
	exC24 = "C24: v1.32.0–v1.69.x swap the arguments (`entry [<package>] for package '\\x00'`); fixed in v1.70.0"
	exPri = "olm.channel property: v1.65.0 decodes `priority` as an int (C11 fails on any other type); master dropped the field"
)

// goldenExceptions are the golden cases whose v1.65.0 result differs from the
// golden (master) result. For these the test checks that our verdict matches
// the golden file instead of the oracle.
var goldenExceptions = map[string]string{
	"c-b-release-bad":          exC17,
	"c-dep-entry-no-schema":    exC24,
	"m-skiprange-bad":          exM14,
	"m-many-errors-one-bundle": exM14,
}

var c24RE = regexp.MustCompile(`^schema must be set for deprecation entry \[(.*)\] for package ('(?:[^'\\]|\\.)*')$`)

// translateC24 rewrites v1.65.0's swapped-argument C24 message into master's
// (`[%d] ... %q`). The entry index survives as a Go rune literal, so the
// translation is exact.
func translateC24(msg string) (string, bool) {
	m := c24RE.FindStringSubmatch(msg)
	if m == nil {
		return "", false
	}
	r, err := strconv.Unquote(m[2])
	if err != nil || len([]rune(r)) != 1 {
		return "", false
	}
	return fmt.Sprintf("schema must be set for deprecation entry [%d] for package %q", []rune(r)[0], m[1]), true
}

// masterChannel is master's olm.channel property value (no priority).
type masterChannelValue struct {
	ChannelName string `json:"channelName"`
}

// newReleaseMaster is master's model.NewRelease, used only to tell whether a
// release string is treated differently by v1.65.0 and master.
func newReleaseMaster(rel string) error {
	if rel == "" {
		return nil
	}
	if len(rel) > 20 {
		return fmt.Errorf("invalid release %q: exceeds maximum length of 20 characters", rel)
	}
	var errs []string
	for i, seg := range strings.Split(rel, ".") {
		if _, err := semver.NewPRVersion(seg); err != nil {
			errs = append(errs, fmt.Sprintf("segment %d: %v", i, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid release %q: %s", rel, strings.Join(errs, "\n"))
	}
	return nil
}

// releaseV165 is v1.65.0's release check in ConvertToModel.
func releaseV165(rel string) error {
	if rel == "" {
		return nil
	}
	v, err := semver.Parse("0.0.0-" + rel)
	if err != nil {
		return err
	}
	if len(v.Build) != 0 {
		return fmt.Errorf("cannot contain build metadata")
	}
	return nil
}

// v165Exception decides whether the oracle's answer for a catalog can differ
// from master's because of a rule listed in §9. It returns the reason when
// the case must be excluded, or a translated expected message (C24) when the
// difference is only wording that can be rewritten exactly.
func v165Exception(o opmref.Outcome) (excluded string, translated string) {
	if o.Phase == opmref.PhaseLoad || o.Config == nil {
		// Loading is identical in both versions.
		return "", ""
	}
	cfg := o.Config
	for _, b := range cfg.Bundles {
		for _, p := range b.Properties {
			switch p.Type {
			case property.TypeChannel:
				var old property.Channel
				var cur masterChannelValue
				e1, e2 := json.Unmarshal(p.Value, &old), json.Unmarshal(p.Value, &cur)
				if (e1 == nil) != (e2 == nil) || (e1 != nil && e1.Error() != e2.Error()) {
					return exPri, ""
				}
			case property.TypePackage:
				var pkg property.Package
				if json.Unmarshal(p.Value, &pkg) != nil || pkg.Release == "" {
					continue
				}
				if releaseV165(pkg.Release) != nil || newReleaseMaster(pkg.Release) != nil {
					return exC17, ""
				}
			}
		}
	}
	if o.Phase == opmref.PhaseOK || o.Phase == opmref.PhaseModel {
		for _, ch := range cfg.Channels {
			for _, e := range ch.Entries {
				if e.SkipRange == "" {
					continue
				}
				if _, err := semver.ParseRange(e.SkipRange); err != nil {
					return exM14, ""
				}
			}
		}
	}
	if o.Phase == opmref.PhaseConvert {
		if t, ok := translateC24(o.Message); ok {
			return "", t
		}
	}
	return "", ""
}

// ---- nondeterminism of opm by design ----

// orderedFS presents a MapFS with directory entries in a chosen order, which
// makes declcfg.LoadFS (one goroutine) read files in that order. opm reads
// files with NumCPU goroutines, so any order can happen there.
type orderedFS struct {
	fstest.MapFS
	key func(p string) string
}

func (o orderedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	des, err := o.MapFS.ReadDir(name)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(des, func(i, j int) bool {
		return o.key(path.Join(name, des[i].Name())) < o.key(path.Join(name, des[j].Name()))
	})
	return des, nil
}

// reversedKey sorts paths in reverse lexical order: every byte is
// complemented and a 0xff terminator (never produced by complementing a
// path byte, as paths hold no NUL) makes a name sort after its extensions.
func reversedKey(p string) string {
	b := make([]byte, 0, len(p)+1)
	for i := 0; i < len(p); i++ {
		b = append(b, ^p[i])
	}
	return string(append(b, 0xff))
}

func hashedKey(seed string) func(string) string {
	return func(p string) string {
		h := fnv.New64a()
		h.Write([]byte(seed))
		h.Write([]byte(p))
		return fmt.Sprintf("%016x", h.Sum64())
	}
}

const (
	ndBadFiles  = "several bad files (opm's load goroutines pick one at random)"
	ndBlobOrder = "blob order across files (opm's load goroutines interleave files at random)"
	ndC19       = "C19 leftovers in several packages (Go map order)"
)

// nondeterministic reports why opm's message for a failing catalog is not
// fixed, or "" when it is. It re-runs the oracle with other file orders and
// checks the C19 quirk for several packages.
func nondeterministic(files map[string]string, base opmref.Outcome) string {
	if base.RC == 0 {
		return ""
	}
	if base.Phase == opmref.PhaseConvert && strings.HasPrefix(base.Message, "no olm.bundle blobs found in package ") && c19Packages(base) > 1 {
		return ndC19
	}
	if len(files) < 2 {
		return ""
	}
	want := errtree.Canonical(base.Message)
	m := mapFS(files)
	orders := []func(string) string{reversedKey, hashedKey("a"), hashedKey("b")}
	for _, key := range orders {
		o := opmref.Run(orderedFS{m, key}, 1)
		if errtree.Canonical(o.Message) != want {
			if base.Phase == opmref.PhaseLoad || o.Phase == opmref.PhaseLoad {
				return ndBadFiles
			}
			return ndBlobOrder
		}
		if o.Phase == opmref.PhaseConvert && strings.HasPrefix(o.Message, "no olm.bundle blobs found in package ") && c19Packages(o) > 1 {
			return ndC19
		}
	}
	return ""
}

// c19Packages counts the packages whose last-loaded channel has entries with
// no olm.bundle blob: when more than one, opm reports a random one.
func c19Packages(o opmref.Outcome) int {
	if o.Config == nil {
		return 0
	}
	last := map[string][]string{}
	for _, ch := range o.Config.Channels {
		var names []string
		for _, e := range ch.Entries {
			names = append(names, e.Name)
		}
		last[ch.Package] = names
	}
	bundles := map[string]map[string]bool{}
	for _, b := range o.Config.Bundles {
		if bundles[b.Package] == nil {
			bundles[b.Package] = map[string]bool{}
		}
		bundles[b.Package][b.Name] = true
	}
	n := 0
	for pkg, names := range last {
		for _, name := range names {
			if !bundles[pkg][name] {
				n++
				break
			}
		}
	}
	return n
}

// ---- reporting ----

func describeFiles(files map[string]string) string {
	var b strings.Builder
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		c := files[p]
		const max = 4000
		more := ""
		if len(c) > max {
			more = fmt.Sprintf("\n… (%d more bytes)", len(c)-max)
			c = c[:max]
		}
		if needsQuoting(c) {
			fmt.Fprintf(&b, "----- %s (Go-quoted: holds control bytes, CR, a BOM or invalid UTF-8) -----\n%s%s\n", p, strconv.Quote(c), more)
			continue
		}
		fmt.Fprintf(&b, "----- %s -----\n%s", p, c)
		switch {
		case more != "":
			b.WriteString(more + "\n")
		case !strings.HasSuffix(c, "\n"):
			b.WriteString("⏎(no final newline)\n")
		}
	}
	return b.String()
}

func needsQuoting(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || r == '\ufeff' {
			return true
		}
	}
	return false
}

func readGolden(t *testing.T) []goldenCase {
	t.Helper()
	b, err := os.ReadFile("../testdata/opm-validate-golden.json")
	if err != nil {
		t.Fatalf("read golden copy: %v", err)
	}
	var g struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("parse golden copy: %v", err)
	}
	if len(g.Cases) == 0 {
		t.Fatalf("golden copy has no cases")
	}
	return g.Cases
}

type goldenCase struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Files       map[string]string `json:"files"`
	RC          int               `json:"rc"`
	Message     string            `json:"message"`
}

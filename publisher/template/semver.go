package template

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// semverDoc is an olm.semver template. The field names and types are the
// format: the template is decoded strictly (an unknown or repeated field is
// an error) and keys match case-insensitively, as opm reads it.
type semverDoc struct {
	Schema                       string        `json:"schema"`
	GenerateMajorChannels        bool          `json:"generateMajorChannels,omitempty"`
	GenerateMinorChannels        bool          `json:"generateMinorChannels,omitempty"`
	DefaultChannelTypePreference string        `json:"defaultChannelTypePreference,omitempty"`
	Candidate                    semverChannel `json:"candidate,omitempty"`
	Fast                         semverChannel `json:"fast,omitempty"`
	Stable                       semverChannel `json:"stable,omitempty"`
}

type semverChannel struct {
	Bundles []struct {
		Image string `json:"image,omitempty"`
	} `json:"bundles,omitempty"`
}

// Stream kinds: channels per major version, per minor version, and the
// default preference for neither. Their rank breaks ties when choosing
// the default channel (minor above major) and orders the edge walk.
const (
	streamNone  = ""
	streamMajor = "major"
	streamMinor = "minor"
)

var streamRank = map[string]int{streamNone: 0, streamMajor: 1, streamMinor: 2}

// archetypes in ascending stability; the index is the rank.
var archetypes = []string{"candidate", "fast", "stable"}

var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]+)"`)

// semver expands an olm.semver template.
func (t *run) semver(ctx context.Context) (*declcfg.DeclarativeConfig, error) {
	var doc semverDoc
	if err := yaml.UnmarshalStrict(t.data, &doc); err != nil {
		line := 0
		if m := unknownFieldRE.FindStringSubmatch(err.Error()); m != nil {
			line = t.pos.key(m[1])
		}
		if line == 0 {
			line = t.pos.errLine(err)
		}
		t.fail(RuleField, line, "", "the template does not decode: %v", err)
		return nil, nil
	}
	if doc.Schema != SchemaSemver {
		t.fail(RuleSchema, t.pos.key("schema"), "", "input file has unknown schema, should be %q", SchemaSemver)
		return nil, nil
	}
	if !doc.GenerateMajorChannels && !doc.GenerateMinorChannels {
		doc.GenerateMinorChannels = true
	}
	prefLine := t.pos.key("defaultChannelTypePreference")
	switch doc.DefaultChannelTypePreference {
	case streamNone:
		if doc.GenerateMinorChannels {
			doc.DefaultChannelTypePreference = streamMinor
		} else {
			doc.DefaultChannelTypePreference = streamMajor
		}
	case streamMinor, streamMajor:
		generated := doc.GenerateMinorChannels
		if doc.DefaultChannelTypePreference == streamMajor {
			generated = doc.GenerateMajorChannels
		}
		if !generated {
			t.fail(RuleField, prefLine, "", "defaultChannelTypePreference is %q, but %s-version channels are not generated", doc.DefaultChannelTypePreference, doc.DefaultChannelTypePreference)
			return nil, nil
		}
	default:
		t.fail(RuleField, prefLine, "", "unknown defaultChannelTypePreference %q: valid values are 'major' or 'minor'", doc.DefaultChannelTypePreference)
		return nil, nil
	}

	lists := [][]string{nil, nil, nil}
	var refs []string
	for i, ch := range []semverChannel{doc.Candidate, doc.Fast, doc.Stable} {
		for _, b := range ch.Bundles {
			lists[i] = append(lists[i], b.Image)
			refs = append(refs, b.Image)
		}
	}
	if len(refs) == 0 {
		t.fail(RuleBundle, 0, "", "no bundles specified: list bundle images under candidate, fast or stable")
		return nil, nil
	}
	rendered, err := t.renderBundles(ctx, refs)
	if err != nil || len(t.res.Findings) > 0 {
		return nil, err
	}

	out := &declcfg.DeclarativeConfig{}
	csvOf := map[string]string{}
	seenRef := map[string]bool{}
	for _, ref := range refs {
		if seenRef[ref] {
			continue
		}
		seenRef[ref] = true
		b := rendered[ref]
		if len(b.cfg.Bundles) != 1 {
			t.fail(RuleBundle, t.pos.value(ref), "", "bundle reference %q resulted in %d bundles, expected 1", ref, len(b.cfg.Bundles))
			continue
		}
		out.Bundles = append(out.Bundles, b.cfg.Bundles[0])
		csvOf[ref] = b.csvs[0]
	}
	if len(t.res.Findings) > 0 {
		return nil, nil
	}

	// The versions of each archetype's bundles, checked as opm checks
	// them, archetype by archetype.
	pkg := ""
	versions := make([]map[string]semver.Version, len(archetypes))
	for a, list := range lists {
		versions[a] = map[string]semver.Version{}
		for _, ref := range list {
			b := rendered[ref].cfg.Bundles[0]
			line := t.pos.value(ref)
			props, err := property.Parse(b.Properties)
			if err != nil {
				t.fail(RuleBundle, line, b.Name, "parse properties for bundle %q: %v", b.Name, err)
				return nil, nil
			}
			if len(props.Packages) != 1 {
				t.fail(RuleBundle, line, b.Name, "bundle %q has %d %q properties, expected exactly 1", b.Name, len(props.Packages), property.TypePackage)
				return nil, nil
			}
			v, err := semver.Parse(props.Packages[0].Version)
			if err != nil {
				t.fail(RuleBundle, line, b.Name, "bundle %q has invalid version %q: %v", b.Name, props.Packages[0].Version, err)
				return nil, nil
			}
			name := props.Packages[0].PackageName
			if pkg == "" {
				pkg = name
				out.Packages = append(out.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: name})
			} else if name != pkg {
				t.fail(RuleBundle, line, b.Name, "bundle of package %q does not belong to this template's package %q", name, pkg)
				return nil, nil
			}
			if _, dup := versions[a][b.Name]; dup {
				t.fail(RuleBundle, line, b.Name, "duplicate bundle name %q in %s", b.Name, archetypes[a])
				return nil, nil
			}
			versions[a][b.Name] = v
		}
		if msg := buildMetadataConflicts(versions[a]); msg != "" {
			t.fail(RuleBundle, t.pos.key(archetypes[a]), "", "%s: bundle versions differ only by build metadata, which cannot be ordered: %s", archetypes[a], msg)
			return nil, nil
		}
	}

	channels, defaultChannel := generateChannels(pkg, versions, doc)
	out.Channels = channels
	out.Packages[0].DefaultChannel = defaultChannel

	// The package's description and icon come from the CSV of the default
	// channel's head. A bundle reused from a catalog whose objects were
	// migrated away has no CSV at hand: render that one image.
	head := ""
	for _, ch := range channels {
		if ch.Name == defaultChannel && len(ch.Entries) > 0 {
			head = ch.Entries[len(ch.Entries)-1].Name
		}
	}
	for _, b := range out.Bundles {
		if b.Name != head || head == "" {
			continue
		}
		csv := csvOf[b.Image]
		if csv == "" {
			r, err := t.pull(ctx, b.Image)
			if err != nil {
				if unreachable(err) {
					return nil, &BundleError{Ref: b.Image, Err: err}
				}
				t.fail(RuleBundle, t.pos.value(b.Image), b.Name, "bundle %s does not render: %v", b.Image, refMessage(err))
				return nil, nil
			}
			t.res.Pulled++
			if len(r.CSVs) == 1 {
				csv = r.CSVs[0]
			}
		}
		packageMetadata(&out.Packages[0], csv)
		break
	}
	return out, nil
}

// buildMetadataConflicts lists the versions that equal another once build
// metadata is dropped; "" when there are none.
func buildMetadataConflicts(versions map[string]semver.Version) string {
	seen := map[string]bool{}
	var conflicts []string
	names := make([]string, 0, len(versions))
	for n := range versions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := versions[n]
		v.Build = nil
		s := v.String()
		if seen[s] {
			conflicts = append(conflicts, fmt.Sprintf("%q cannot be compared to %q", versions[n].String(), s))
		}
		seen[s] = true
	}
	return strings.Join(conflicts, ", ")
}

// edge is one channel entry to link: the bundle, its version, its
// archetype and stream, and where the entry sits.
type edge struct {
	arch    int
	stream  string
	channel string
	index   int
	name    string
	version semver.Version
}

// generateChannels builds the channels of every archetype in ascending
// stability, each bundle (by ascending version) into its major and/or
// minor channel, and picks the default channel: the most stable
// archetype, then the highest version a channel starts at, then the
// preferred stream, then the higher-ranked stream.
func generateChannels(pkg string, versions []map[string]semver.Version, doc semverDoc) ([]declcfg.Channel, string) {
	type best struct {
		arch    int
		stream  string
		version semver.Version
		name    string
	}
	// above says whether a new channel beats the current default.
	above := func(c, cur best) bool {
		if c.arch != cur.arch {
			return c.arch > cur.arch
		}
		if !c.version.EQ(cur.version) {
			return c.version.GT(cur.version)
		}
		if c.stream == cur.stream {
			return false
		}
		if c.stream == doc.DefaultChannelTypePreference || cur.stream == doc.DefaultChannelTypePreference {
			return c.stream == doc.DefaultChannelTypePreference
		}
		return streamRank[c.stream] > streamRank[cur.stream]
	}
	def := best{}
	byName := map[string]*declcfg.Channel{}
	var edges []edge
	for a, vs := range versions {
		names := make([]string, 0, len(vs))
		for n := range vs {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return vs[names[i]].LT(vs[names[j]]) })
		for _, n := range names {
			v := vs[n]
			var streams []string
			if doc.GenerateMajorChannels {
				streams = append(streams, streamMajor)
			}
			if doc.GenerateMinorChannels {
				streams = append(streams, streamMinor)
			}
			for _, s := range streams {
				chName := fmt.Sprintf("%s-v%d", archetypes[a], v.Major)
				if s == streamMinor {
					chName = fmt.Sprintf("%s-v%d.%d", archetypes[a], v.Major, v.Minor)
				}
				ch := byName[chName]
				if ch == nil {
					ch = &declcfg.Channel{Schema: declcfg.SchemaChannel, Name: chName, Package: pkg, Entries: []declcfg.ChannelEntry{}}
					byName[chName] = ch
					if c := (best{arch: a, stream: s, version: v, name: chName}); above(c, def) {
						def = c
					}
				}
				ch.Entries = append(ch.Entries, declcfg.ChannelEntry{Name: n})
				edges = append(edges, edge{arch: a, stream: s, channel: chName, index: len(ch.Entries) - 1, name: n, version: v})
			}
		}
	}
	link(byName, edges)
	channels := make([]declcfg.Channel, 0, len(byName))
	for _, ch := range byName {
		channels = append(channels, *ch)
	}
	slices.SortFunc(channels, func(a, b declcfg.Channel) int { return strings.Compare(a.Name, b.Name) })
	return channels, def.name
}

// link writes the upgrade edges. Entries are walked per archetype and
// stream, by version; within a major version, the highest patch of each
// minor version (and the last entry) replaces the highest patch of the
// minor version before it and skips every lower entry walked since the
// major version began. Edges never cross an archetype, a stream or a
// major version.
func link(byName map[string]*declcfg.Channel, edges []edge) {
	sort.Slice(edges, func(i, j int) bool {
		a, b := edges[i], edges[j]
		if a.arch != b.arch {
			return a.arch < b.arch
		}
		if streamRank[a.stream] != streamRank[b.stream] {
			return streamRank[a.stream] < streamRank[b.stream]
		}
		return a.version.LT(b.version)
	})
	sameStream := func(a, b edge) bool {
		return a.arch == b.arch && a.stream == b.stream && a.version.Major == b.version.Major
	}
	replaces := ""
	skips := map[string]bool{}
	write := func(e edge) {
		entry := &byName[e.channel].Entries[e.index]
		entry.Replaces = replaces
		var list []string
		for s := range skips {
			if s != replaces {
				list = append(list, s)
			}
		}
		if len(list) > 0 {
			sort.Strings(list)
			entry.Skips = list
		}
	}
	for i := 1; i < len(edges); i++ {
		prev, cur := edges[i-1], edges[i]
		same := sameStream(prev, cur)
		minorMoved := prev.version.Minor != cur.version.Minor
		if !same || minorMoved {
			write(prev)
		}
		if !same {
			replaces, skips = "", map[string]bool{}
			continue
		}
		if minorMoved {
			replaces = prev.name
		}
		skips[prev.name] = true
	}
	if n := len(edges); n > 1 && sameStream(edges[n-2], edges[n-1]) {
		write(edges[n-1])
	}
}

// packageMetadata sets the package's description and icon from a CSV, as
// opm does: spec.description when it is a non-empty string, and the first
// of spec.icon.
func packageMetadata(p *declcfg.Package, csvJSON string) {
	if csvJSON == "" {
		return
	}
	var csv struct {
		Spec json.RawMessage `json:"spec"`
	}
	if json.Unmarshal([]byte(csvJSON), &csv) != nil {
		return
	}
	var spec map[string]*json.RawMessage
	if json.Unmarshal(csv.Spec, &spec) != nil {
		return
	}
	if raw := spec["description"]; raw != nil {
		var desc string
		if json.Unmarshal(*raw, &desc) == nil && desc != "" {
			p.Description = desc
		}
	}
	if raw := spec["icon"]; raw != nil {
		var icons []struct {
			MediaType string `json:"mediatype"`
			Data      []byte `json:"base64data"`
		}
		if json.Unmarshal(*raw, &icons) == nil && len(icons) > 0 {
			p.Icon = &declcfg.Icon{Data: icons[0].Data, MediaType: icons[0].MediaType}
		}
	}
}

package fbcgen_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks/fbc/fbcgen"
)

// A compact re-statement of what `opm validate` requires (spec §L, §C, §M,
// §P), enough to show that generated catalogs are valid without the
// reference implementation. The reference run is documented in the report.

type (
	entry struct {
		Name      string   `json:"name"`
		Replaces  string   `json:"replaces"`
		Skips     []string `json:"skips"`
		SkipRange string   `json:"skipRange"`
	}
	blob struct {
		Schema         string `json:"schema"`
		Name           string `json:"name"`
		Package        string `json:"package"`
		DefaultChannel string `json:"defaultChannel"`
		Icon           *struct {
			Data      []byte `json:"base64data"`
			MediaType string `json:"mediatype"`
		} `json:"icon"`
		Entries    []entry `json:"entries"`
		Image      string  `json:"image"`
		Properties []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
		RelatedImages []struct {
			Name  string `json:"name"`
			Image string `json:"image"`
		} `json:"relatedImages"`
	}
	gvkValue struct {
		Group   string `json:"group"`
		Kind    string `json:"kind"`
		Version string `json:"version"`
	}
	descriptor struct {
		Path         string   `json:"path"`
		DisplayName  string   `json:"displayName"`
		Description  string   `json:"description"`
		XDescriptors []string `json:"x-descriptors"`
	}
	crdDescription struct {
		Name        string `json:"name"`
		Version     string `json:"version"`
		Kind        string `json:"kind"`
		DisplayName string `json:"displayName"`
		Description string `json:"description"`
		Resources   []struct {
			Name    string `json:"name"`
			Kind    string `json:"kind"`
			Version string `json:"version"`
		} `json:"resources"`
		StatusDescriptors []descriptor `json:"statusDescriptors"`
		SpecDescriptors   []descriptor `json:"specDescriptors"`
	}
	appLink struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	}
	// csvMetadata mirrors operator-registry's property.CSVMetadata.
	csvMetadata struct {
		Annotations           map[string]string `json:"annotations"`
		APIServiceDefinitions struct {
			Owned    []json.RawMessage `json:"owned"`
			Required []json.RawMessage `json:"required"`
		} `json:"apiServiceDefinitions"`
		CRDDescriptions struct {
			Owned    []crdDescription `json:"owned"`
			Required []crdDescription `json:"required"`
		} `json:"crdDescriptions"`
		Description  string `json:"description"`
		DisplayName  string `json:"displayName"`
		InstallModes []struct {
			Type      string `json:"type"`
			Supported bool   `json:"supported"`
		} `json:"installModes"`
		Keywords    []string          `json:"keywords"`
		Labels      map[string]string `json:"labels"`
		Links       []appLink         `json:"links"`
		Maintainers []struct {
			Name  string `json:"name"`
			Email string `json:"email"`
		} `json:"maintainers"`
		Maturity       string  `json:"maturity"`
		MinKubeVersion string  `json:"minKubeVersion"`
		Provider       appLink `json:"provider"`
	}
)

var (
	dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	semver       = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)
	imageRef     = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(\.[a-z0-9]+)+(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+((:[\w][\w.-]{0,127})|(@sha256:[0-9a-f]{64}))$`)
	skipRange    = regexp.MustCompile(`^>=\S+ <\S+$`)
)

// decodeDocs splits a catalog file the way opm does (YAML documents, or a
// JSON stream when the first byte is '{') and decodes each into JSON using
// YAML 1.1 typing, so an unquoted `1.0` or `on` would surface as a type error.
func decodeDocs(t *testing.T, name string, data []byte) [][]byte {
	var out [][]byte
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		dec := json.NewDecoder(bytes.NewReader(data))
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, raw)
		}
		return out
	}
	if !bytes.HasPrefix(data, []byte("---\n")) {
		t.Errorf("%s: does not start with ---", name)
	}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		doc = bytes.TrimPrefix(doc, []byte("---\n"))
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, j)
	}
	return out
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// checkCatalog returns the problems opm would report, plus counts.
func checkCatalog(t *testing.T, files map[string][]byte) (problems []string, st fbcgen.Stats) {
	bad := func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) }
	type pkgInfo struct {
		def      string
		channels map[string][]entry
		bundles  map[string]string // name -> version
	}
	pkgs := map[string]*pkgInfo{}
	get := func(n string) *pkgInfo {
		if pkgs[n] == nil {
			pkgs[n] = &pkgInfo{channels: map[string][]entry{}, bundles: map[string]string{}}
		}
		return pkgs[n]
	}
	declared := map[string]bool{}
	for name, data := range files {
		for _, raw := range decodeDocs(t, name, data) {
			var b blob
			if err := json.Unmarshal(raw, &b); err != nil {
				bad("%s: %v", name, err)
				continue
			}
			switch b.Schema {
			case "olm.package":
				st.Packages++
				if declared[b.Name] {
					bad("duplicate package %q", b.Name)
				}
				declared[b.Name] = true
				if !dns1123Label.MatchString(b.Name) || len(b.Name) > 63 {
					bad("invalid package name %q", b.Name)
				}
				if b.Icon == nil || len(b.Icon.Data) < 100 || b.Icon.MediaType == "" {
					bad("package %q: no icon", b.Name)
				}
				if dirName := strings.Split(name, "/")[0]; dirName != b.Name {
					bad("package %q in directory %q", b.Name, dirName)
				}
				get(b.Name).def = b.DefaultChannel
			case "olm.channel":
				st.Channels++
				p := get(b.Package)
				if _, dup := p.channels[b.Name]; dup || b.Name == "" {
					bad("package %q: bad or duplicate channel %q", b.Package, b.Name)
				}
				p.channels[b.Name] = b.Entries
			case "olm.bundle":
				st.Bundles++
				checkBundle(b, bad, &st)
				p := get(b.Package)
				if _, dup := p.bundles[b.Name]; dup {
					bad("package %q has duplicate bundle %q", b.Package, b.Name)
				}
				for _, pr := range b.Properties {
					if pr.Type == "olm.package" {
						var v struct{ Version string }
						json.Unmarshal(pr.Value, &v)
						p.bundles[b.Name] = v.Version
					}
				}
			default:
				bad("%s: unexpected schema %q", name, b.Schema)
			}
		}
	}
	for name, p := range pkgs {
		if !declared[name] {
			bad("unknown package %q", name)
		}
		if _, ok := p.channels[p.def]; !ok {
			bad("package %q: default channel %q not found", name, p.def)
		}
		inChannel := map[string]bool{}
		for chName, ents := range p.channels {
			if err := checkGraph(ents); err != "" {
				bad("package %q channel %q: %s", name, chName, err)
			}
			for _, e := range ents {
				inChannel[e.Name] = true
				if _, ok := p.bundles[e.Name]; !ok {
					bad("package %q channel %q: entry %q has no bundle", name, chName, e.Name)
				}
				if e.SkipRange != "" && !skipRange.MatchString(e.SkipRange) {
					bad("bad skipRange %q", e.SkipRange)
				}
			}
		}
		versions := map[string]string{}
		for b, v := range p.bundles {
			if !inChannel[b] {
				bad("package %q, bundle %q not found in any channel entries", name, b)
			}
			if other, dup := versions[v]; dup {
				bad("package %q: version %s used by %s and %s", name, v, b, other)
			}
			versions[v] = b
		}
	}
	return problems, st
}

func checkBundle(b blob, bad func(string, ...any), st *fbcgen.Stats) {
	if !imageRef.MatchString(b.Image) {
		bad("bundle %q: image %q", b.Name, b.Image)
	}
	for _, ri := range b.RelatedImages {
		if !imageRef.MatchString(ri.Image) {
			bad("bundle %q: related image %q", b.Name, ri.Image)
		}
	}
	st.RelatedImages += len(b.RelatedImages)
	npkg, ncsv := 0, 0
	for i, pr := range b.Properties {
		switch pr.Type {
		case "olm.package":
			npkg++
			var v struct {
				PackageName string `json:"packageName"`
				Version     string `json:"version"`
			}
			if err := strictUnmarshal(pr.Value, &v); err != nil {
				bad("bundle %q property %d: %v", b.Name, i, err)
			}
			if v.PackageName != b.Package || !semver.MatchString(v.Version) || b.Name != b.Package+".v"+v.Version {
				bad("bundle %q: olm.package %+v", b.Name, v)
			}
		case "olm.gvk", "olm.gvk.required":
			var v gvkValue
			if err := strictUnmarshal(pr.Value, &v); err != nil || v.Group == "" || v.Kind == "" || v.Version == "" {
				bad("bundle %q property %d: %s %v", b.Name, i, pr.Value, err)
			}
			if pr.Type == "olm.gvk" {
				st.GVK++
			} else {
				st.GVKRequired++
			}
		case "olm.package.required":
			st.PackageRequired++
			var v struct {
				PackageName  string `json:"packageName"`
				VersionRange string `json:"versionRange"`
			}
			if err := strictUnmarshal(pr.Value, &v); err != nil || v.PackageName == "" || v.VersionRange == "" {
				bad("bundle %q property %d: %s %v", b.Name, i, pr.Value, err)
			}
		case "olm.csv.metadata":
			st.CSVMetadata++
			var v csvMetadata
			if err := strictUnmarshal(pr.Value, &v); err != nil {
				bad("bundle %q csv metadata: %v", b.Name, err)
			}
			if len(v.CRDDescriptions.Owned) == 0 || len(v.InstallModes) != 4 || len(v.Description) < 500 || v.Annotations["alm-examples"] == "" {
				bad("bundle %q: thin csv metadata", b.Name)
			}
		case "olm.bundle.object":
			st.BundleObjects++
			var v struct {
				Data []byte `json:"data"`
			}
			if err := strictUnmarshal(pr.Value, &v); err != nil {
				bad("bundle %q property %d: %v", b.Name, i, err)
				continue
			}
			st.BundleObjectBytes += int64(len(v.Data))
			var m struct {
				APIVersion string          `json:"apiVersion"`
				Kind       string          `json:"kind"`
				Spec       json.RawMessage `json:"spec"`
			}
			if err := json.Unmarshal(v.Data, &m); err != nil || m.APIVersion == "" || m.Kind == "" {
				bad("bundle %q object %d: %v", b.Name, i, err)
			}
			if m.Kind == "ClusterServiceVersion" {
				ncsv++
				var spec struct {
					Version string `json:"version"`
				}
				json.Unmarshal(m.Spec, &spec)
				if !strings.HasSuffix(b.Name, ".v"+spec.Version) {
					bad("bundle %q: CSV version %q", b.Name, spec.Version)
				}
			}
		default:
			bad("bundle %q: unexpected property %q", b.Name, pr.Type)
		}
	}
	if npkg != 1 {
		bad("bundle %q has %d olm.package properties", b.Name, npkg)
	}
	if st.BundleObjects > 0 && ncsv > 1 {
		bad("bundle %q has %d CSVs", b.Name, ncsv)
	}
}

// checkGraph applies opm's channel rules (M6-M9, v1.58+): exactly one head,
// a replaces chain from it without cycles that stops at skipped bundles,
// and every entry either on that chain or skipped.
func checkGraph(ents []entry) string {
	byName := map[string]entry{}
	incoming := map[string]bool{}
	skipped := map[string]bool{}
	for _, e := range ents {
		if _, dup := byName[e.Name]; dup {
			return "duplicate entry " + e.Name
		}
		byName[e.Name] = e
		if e.Replaces != "" {
			incoming[e.Replaces] = true
		}
		for _, s := range e.Skips {
			incoming[s] = true
			skipped[s] = true
		}
	}
	var heads []string
	for _, e := range ents {
		if !incoming[e.Name] {
			heads = append(heads, e.Name)
		}
	}
	sort.Strings(heads)
	switch {
	case len(heads) == 0:
		return "no channel head found in graph"
	case len(heads) > 1:
		return "multiple channel heads found in graph: " + strings.Join(heads, ", ")
	}
	chain := map[string]bool{}
	for cur, ok := byName[heads[0]], true; ok; {
		if chain[cur.Name] {
			return "detected cycle in replaces chain"
		}
		chain[cur.Name] = true
		if skipped[cur.Replaces] {
			break
		}
		cur, ok = byName[cur.Replaces]
	}
	var stranded []string
	for _, e := range ents {
		if !chain[e.Name] && !skipped[e.Name] {
			stranded = append(stranded, e.Name)
		}
	}
	if len(stranded) > 0 {
		sort.Strings(stranded)
		return "channel contains one or more stranded bundles: " + strings.Join(stranded, ", ")
	}
	return ""
}

func TestGeneratedCatalogsAreValid(t *testing.T) {
	specs := []fbcgen.Spec{
		{Packages: 8, BundlesPerPackage: 12, ChannelsPerPackage: 3, Seed: 1, Payload: "mixed", Format: "yaml"},
		{Packages: 3, BundlesPerPackage: 6, ChannelsPerPackage: 2, Seed: 5, Payload: "bundle-object", Format: "json"},
		{Packages: 5, BundlesPerPackage: 1, ChannelsPerPackage: 1, Seed: 2, Payload: "csv-metadata", Format: "yaml"},
		{Packages: 4, BundlesPerPackage: 2, ChannelsPerPackage: 12, Seed: 3, Payload: "csv-metadata", Format: "json"},
	}
	for _, s := range specs {
		dir, want := write(t, s)
		problems, got := checkCatalog(t, readTree(t, dir))
		for _, p := range problems {
			t.Errorf("%+v: %s", s, p)
		}
		if got.Packages != want.Packages || got.Channels != want.Channels || got.Bundles != want.Bundles ||
			got.GVK != want.GVK || got.GVKRequired != want.GVKRequired || got.PackageRequired != want.PackageRequired ||
			got.BundleObjects != want.BundleObjects || got.BundleObjectBytes != want.BundleObjectBytes ||
			got.CSVMetadata != want.CSVMetadata || got.RelatedImages != want.RelatedImages {
			t.Errorf("%+v: read back %+v, Write reported %+v", s, got, want)
		}
		if want.Bundles != s.Packages*s.BundlesPerPackage || want.Channels != s.Packages*s.ChannelsPerPackage {
			t.Errorf("%+v: stats %+v", s, want)
		}
	}
}

// TestGraphsAcrossSeeds exercises the upgrade-graph builder on many seeds
// and shapes (csv-metadata with one CRD keeps it fast).
func TestGraphsAcrossSeeds(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 8
	}
	for seed := uint64(100); seed < uint64(100+n); seed++ {
		s := fbcgen.Spec{Packages: 2, BundlesPerPackage: 1 + int(seed%23), ChannelsPerPackage: 1 + int(seed%5), Seed: seed, Payload: "csv-metadata", Format: "json"}
		dir, _ := write(t, s)
		problems, _ := checkCatalog(t, readTree(t, dir))
		for _, p := range problems {
			t.Errorf("%+v: %s", s, p)
		}
	}
}

func TestCheckGraphRejects(t *testing.T) {
	// Make sure the checker itself catches what opm catches.
	for _, c := range []struct {
		ents []entry
		want string
	}{
		{[]entry{{Name: "a"}, {Name: "b"}}, "multiple channel heads"},
		{[]entry{{Name: "a", Replaces: "b"}, {Name: "b", Replaces: "a"}}, "no channel head"},
		{[]entry{{Name: "a"}, {Name: "b", Replaces: "a"}, {Name: "c", Replaces: "b", Skips: []string{"b"}}}, "stranded bundles: a"},
		{[]entry{{Name: "a"}, {Name: "b", Replaces: "a"}, {Name: "c", Replaces: "a", Skips: []string{"b"}}}, ""},
	} {
		if got := checkGraph(c.ents); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("checkGraph(%+v) = %q, want %q", c.ents, got, c.want)
		}
	}
}

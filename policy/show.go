package policy

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
)

// Setting is one value of the effective policy and where it came from.
type Setting struct {
	// Key is the dotted key of the policy file ("merge.method").
	Key string `json:"key"`
	// Value is the value as the policy file would write it.
	Value string `json:"value"`
	// Origin is "file:line", OriginConventions, or OriginDefault.
	Origin string `json:"origin"`
}

// Settings lists every value of the effective policy, in the order
// docs/policy.md documents them, each with where it came from: the policy
// file, the files its conventions read, or the default. It is what
// `catalogbot policy show` prints.
func (p *Policy) Settings() []Setting {
	list := func(s []string) string {
		if len(s) == 0 {
			return "[]"
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	var out []Setting
	add := func(key, value string) {
		origin := p.Origins[key]
		if origin == "" {
			origin = OriginDefault
		}
		out = append(out, Setting{Key: key, Value: value, Origin: origin})
	}
	if p.Conventions != "" {
		add("conventions", p.Conventions)
	}
	if len(p.CatalogSets) > 0 {
		var sets []string
		for _, c := range p.CatalogSets {
			switch {
			case c.Each != "":
				sets = append(sets, "{each: "+c.Each+imageSuffix(c.Image)+"}")
			default:
				sets = append(sets, "{name: "+c.Name+", roots: "+list(c.Roots)+imageSuffix(c.Image)+"}")
			}
		}
		add("catalogs", list(sets))
	} else {
		add("catalog.roots", list(p.Catalog.Roots))
	}
	add("catalog.layout", cmp.Or(p.Catalog.Layout, LayoutPackageDirs))
	add("catalog.referenceList", p.Catalog.ReferenceList)
	add("catalog.templates", checks.Plural(len(p.Catalog.Templates), "template mapping"))
	add("owners.sources", list(cmpSources(p.Owners.Sources)))
	if m := p.Owners.Maintainers; m != nil {
		add("owners.maintainers", list(m.Logins))
	}
	add("owners.selfApproval", strconv.FormatBool(!p.Owners.NoSelfApproval))
	add("owners.stickyApprovals", strconv.FormatBool(p.Owners.StickyApprovals))
	add("owners.bots", list(p.Owners.Bots))
	if p.Owners.RequireAccess != "" {
		add("owners.requireAccess", p.Owners.RequireAccess)
	}
	var pins []string
	for _, k := range imageKinds {
		if p.Images.Pin[k] {
			pins = append(pins, string(k))
		}
	}
	add("images.pin", list(pins))
	add("images.allowRegistries", list(p.Images.AllowRegistries))
	add("images.bundleRegistries", list(p.Images.BundleRegistries))
	add("images.singleManifestBundles", strconv.FormatBool(p.Images.SingleManifestBundles))
	add("images.catalogLabel", strconv.FormatBool(p.Images.CatalogLabel))
	add("images.platforms", list(p.Images.Platforms))
	add("merge.enabled", strconv.FormatBool(p.Merge.Enabled))
	add("merge.method", p.Merge.Method)
	add("merge.holdLabel", p.Merge.HoldLabel)
	var required []string
	for _, c := range p.Merge.RequiredChecks {
		required = append(required, describeCheck(c))
	}
	add("merge.requiredChecks", list(required))
	add("publish.image", p.Publish.Image)
	add("publish.base", p.Publish.Base)
	add("publish.opmImage", p.Publish.OPMImage)
	add("publish.platforms", list(p.Publish.Platforms))
	add("limits.images", strconv.Itoa(p.Limits.Images))
	add("limits.catalogBytes", strconv.FormatInt(p.Limits.CatalogBytes, 10))
	add("limits.fileBytes", strconv.FormatInt(p.Limits.FileBytes, 10))
	add("limits.referenceTimeout", p.Limits.ReferenceTimeout.String())
	add("limits.checkTimeout", p.Limits.CheckTimeout.String())
	add("release.prunable", list(p.Release.Prunable))
	add("release.continuity", cmp.Or(p.Release.Continuity, ContinuityWarning))
	if len(p.Propose) > 0 {
		add("propose", list(proposeSettings(p.Propose)))
		// The alarm is the App's: its threshold is the service's, not
		// the repository's, so it is named here, not valued.
		add("propose.alarm", "catalogbot serve sets catalogbot_bundle_unplaced_seconds{repo, package} for a release seen longer than its unplacedAfter (1h unless configured) with no catalog entry and no open proposal")
	}
	add("olmv1", cmp.Or(p.OLMv1, OLMv1Report))
	return out
}

func imageSuffix(image string) string {
	if image == "" {
		return ""
	}
	return ", image: " + image
}

// cmpSources are the owners sources with the default spelt out.
func cmpSources(s []string) []string {
	if s == nil {
		return []string{"owners"}
	}
	return slices.Clone(s)
}

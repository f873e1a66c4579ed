package fbc

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// node is one level of opm's model error tree: a message and its children,
// which are nodes or leaves.
type node struct {
	msg      string
	children []*node
}

func (n *node) leaf(msg string) { n.children = append(n.children, &node{msg: msg}) }

func (n *node) sub(child *node) {
	if len(child.children) > 0 {
		n.children = append(n.children, child)
	}
}

// String prints the tree exactly as opm's validationError does.
func (n *node) String() string {
	var sb strings.Builder
	n.write(&sb, "", true)
	return strings.TrimSpace(sb.String())
}

func (n *node) write(sb *strings.Builder, prefix string, last bool) {
	sb.WriteString(prefix)
	sb.WriteString(n.msg)
	if len(n.children) > 0 {
		sb.WriteString(":\n")
	} else {
		sb.WriteString("\n")
	}
	for i, c := range n.children {
		sub := prefix
		if r := []rune(sub); len(r) >= 4 {
			if last {
				sub = string(r[:len(r)-4]) + "    "
			} else {
				sub = string(r[:len(r)-4]) + "│   "
			}
		}
		subLast := i == len(n.children)-1
		if subLast {
			sub += "└── "
		} else {
			sub += "├── "
		}
		c.write(sb, sub, subLast)
	}
}

// validateModel runs opm's Model.Validate (spec M1-M18). It returns opm's
// error tree and one problem per leaf. Packages, channels and bundles are
// visited in name order; opm's order is random, so only the sibling order
// differs.
func validateModel(m *model) (*node, []problem) {
	root := &node{msg: "invalid index"}
	var probs []problem
	add := func(p problem) { p.phase = phaseModel; probs = append(probs, p) }
	for _, name := range slices.Sorted(maps.Keys(m.packages)) {
		root.sub(validatePackage(m.packages[name], add))
	}
	return root, probs
}

func validatePackage(p *mPackage, add func(problem)) *node {
	n := &node{msg: fmt.Sprintf("invalid package %q", p.name)}
	leaf := func(rule, msg, needle string) {
		n.leaf(msg)
		add(problem{rule: rule, at: p.at, pkg: p.name, opm: msg, needle: needle})
	}
	if p.defaultCh == nil {
		leaf("M1", "default channel must be set", "")
	}
	if len(p.channels) == 0 {
		leaf("M2", "package must contain at least one channel", "")
	}
	for _, name := range slices.Sorted(maps.Keys(p.channels)) {
		n.sub(validateChannel(p.channels[name], add))
	}
	if msg := duplicateVersions(p); msg != "" {
		leaf("M3", msg, "")
	}
	if p.deprecated != nil && *p.deprecated == "" {
		msg := "invalid deprecation: message must be set"
		n.leaf(msg)
		add(problem{rule: "M4", at: p.depAt, pkg: p.name, opm: msg, needle: "olm.package"})
	}
	return n
}

// duplicateVersions reports bundles of a package that share a version,
// build metadata and release included (M3).
func duplicateVersions(p *mPackage) string {
	byVersion := map[string]map[string]bool{}
	for _, ch := range p.channels {
		for _, b := range ch.bundles {
			if b.blob != nil && !b.ok {
				continue // its version was already reported as unparsable
			}
			v := versionString(b)
			if byVersion[v] == nil {
				byVersion[v] = map[string]bool{}
			}
			byVersion[v][b.entry.Name] = true
		}
	}
	var groups []string
	for _, v := range slices.Sorted(maps.Keys(byVersion)) {
		if names := slices.Sorted(maps.Keys(byVersion[v])); len(names) > 1 {
			groups = append(groups, fmt.Sprintf("{%s: [%s]}", v, strings.Join(names, ", ")))
		}
	}
	if len(groups) == 0 {
		return ""
	}
	return fmt.Sprintf("duplicate versions found in bundles: [%s]", strings.Join(groups, " "))
}

func versionString(b *mBundle) string {
	v := b.version.String()
	if len(b.release) == 0 {
		return v
	}
	pres := make([]string, len(b.release))
	for i, pr := range b.release {
		pres[i] = pr.String()
	}
	return v + "-" + strings.Join(pres, ".")
}

func validateChannel(c *mChannel, add func(problem)) *node {
	n := &node{msg: fmt.Sprintf("invalid channel %q", c.name)}
	at, needle := c.at, ""
	if c.invented {
		needle = "defaultChannel"
	}
	leaf := func(rule, msg string) {
		n.leaf(msg)
		add(problem{rule: rule, at: at, pkg: c.pkg.name, channel: c.name, opm: msg, needle: needle})
	}
	if len(c.bundles) == 0 {
		msg := "channel must contain at least one bundle"
		if c.invented {
			n.leaf(msg)
			add(problem{rule: "M5", at: at, pkg: c.pkg.name, channel: c.name, opm: msg, needle: needle,
				message: fmt.Sprintf("default channel %q does not exist", c.name)})
		} else {
			leaf("M5", msg)
		}
	} else if rule, err := replacesChain(c); err != nil {
		leaf(rule, err.Error())
	}
	for _, name := range slices.Sorted(maps.Keys(c.bundles)) {
		n.sub(validateBundle(c.bundles[name], add))
	}
	if c.deprecated != nil && *c.deprecated == "" {
		msg := "invalid deprecation: message must be set"
		n.leaf(msg)
		add(problem{rule: "M10", at: c.depAt, pkg: c.pkg.name, channel: c.name, opm: msg, needle: field("name", c.name)})
	}
	return n
}

// head finds the one bundle of the channel that nothing replaces or skips.
func head(c *mChannel) (*mBundle, error) {
	incoming := map[string]bool{}
	for _, b := range c.bundles {
		if b.entry.Replaces != "" {
			incoming[b.entry.Replaces] = true
		}
		for _, s := range b.entry.Skips {
			incoming[s] = true
		}
	}
	var heads []string
	for name := range c.bundles {
		if !incoming[name] {
			heads = append(heads, name)
		}
	}
	switch len(heads) {
	case 0:
		return nil, errors.New("no channel head found in graph")
	case 1:
		return c.bundles[heads[0]], nil
	}
	sort.Strings(heads)
	return nil, fmt.Errorf("multiple channel heads found in graph: %s", strings.Join(heads, ", "))
}

// replacesChain follows replaces from the head, stopping at a bundle some
// entry skips or at a name outside the channel, and requires every bundle to
// be on that chain or skipped (M6-M9). Only the first problem is reported.
func replacesChain(c *mChannel) (string, error) {
	h, err := head(c)
	if err != nil {
		if strings.HasPrefix(err.Error(), "multiple") {
			return "M7", err
		}
		return "M6", err
	}
	skipped := map[string]bool{}
	for _, b := range c.bundles {
		for _, s := range b.entry.Skips {
			skipped[s] = true
		}
	}
	// chainFrom[x] is the chain walked since x was first visited, which is
	// what opm prints when the walk comes back to x.
	chainFrom := map[string][]string{}
	onChain := map[string]bool{h.entry.Name: true}
	for cur := h; cur != nil; {
		name := cur.entry.Name
		if _, ok := chainFrom[name]; !ok {
			chainFrom[name] = []string{name}
		}
		next := cur.entry.Replaces
		if skipped[next] {
			break
		}
		for k := range chainFrom {
			chainFrom[k] = append(chainFrom[k], next)
		}
		if onChain[next] {
			return "M8", fmt.Errorf("detected cycle in replaces chain of upgrade graph: %s", strings.Join(chainFrom[next], " -> "))
		}
		onChain[next] = true
		cur = c.bundles[next]
	}
	var stranded []string
	for name := range c.bundles {
		if !onChain[name] && !skipped[name] {
			stranded = append(stranded, name)
		}
	}
	if len(stranded) > 0 {
		sort.Strings(stranded)
		return "M9", fmt.Errorf("channel contains one or more stranded bundles: %s", strings.Join(stranded, ", "))
	}
	return "", nil
}

func validateBundle(b *mBundle, add func(problem)) *node {
	name := b.entry.Name
	n := &node{msg: fmt.Sprintf("invalid bundle %q", name)}
	base := problem{pkg: b.ch.pkg.name, channel: b.ch.name, bundle: name}
	// Entry-level rules point at the channel entry, blob-level ones at the
	// bundle blob when there is one.
	entry := func(rule, msg string) {
		n.leaf(msg)
		p := base
		p.rule, p.opm, p.at, p.needle = rule, msg, b.ch.at, field("name", name)
		add(p)
	}
	blob := func(rule, msg, needle, human string) {
		n.leaf(msg)
		p := base
		p.rule, p.opm, p.message = rule, msg, human
		if b.blob != nil {
			p.at, p.needle = b.blob.pos, needle
		} else {
			p.at, p.needle = b.ch.at, field("name", name)
		}
		add(p)
	}
	if name == "" {
		entry("M11", "name must be set")
	}
	if b.ok && len(b.release) > 0 {
		if norm := b.ch.pkg.name + "-v" + versionString(b); norm != name {
			blob("M12", fmt.Sprintf("name %q does not match normalized name %q", name, norm), "name", "")
		}
	}
	for i, s := range b.entry.Skips {
		if s == "" {
			entry("M13", fmt.Sprintf("skip[%d] is empty", i))
		}
	}
	if r := b.entry.SkipRange; r != "" {
		if _, err := semver.ParseRange(r); err != nil {
			entry("M14", fmt.Sprintf("invalid skipRange %q: %v", r, err))
		}
	}
	noBlob := b.blob == nil
	if noBlob {
		msg := `must be exactly one property with type "olm.package"`
		if b.leftover {
			n.leaf(msg) // already reported by C19
		} else {
			blob("M15", msg, "", fmt.Sprintf("channel entry %q has no olm.bundle blob", name))
		}
	}
	if noBlob || (b.blob.image == "" && b.blob.objects == 0) {
		msg := "bundle image must be set"
		if noBlob {
			n.leaf(msg) // the missing blob is the problem, reported above
		} else {
			blob("M16", msg, "image", "")
		}
	}
	if b.deprecated != nil && *b.deprecated == "" {
		msg := "invalid deprecation: message must be set"
		n.leaf(msg)
		p := base
		p.rule, p.opm, p.at, p.needle = "M17", msg, b.depAt, field("name", name)
		add(p)
	}
	if b.ok && len(b.version.Build) > 0 && len(b.release) > 0 {
		blob("M18", "cannot use build metadata in version with a release version", "version", "")
	}
	return n
}

package fbc

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// addFast turns a fast-parsed document into its record when the document is
// well-formed in every respect the exact path checks: known keys in their
// exact case, the right types everywhere, decodable properties. It reports
// false, adding nothing, whenever the exact path might say anything else,
// including any error.
func (fr *fileResult) addFast(at pos, root *ynode) bool {
	schema := root.get("schema")
	if schema == nil || schema.kind != 's' {
		return false
	}
	switch string(schema.str) {
	case declcfg.SchemaPackage:
		return fr.fastPackage(at, root)
	case declcfg.SchemaChannel:
		return fr.fastChannel(at, root)
	case declcfg.SchemaBundle:
		return fr.fastBundle(at, root)
	case declcfg.SchemaDeprecation:
		return fr.fastDeprecation(at, root)
	case "":
		return false
	}
	// Other schemas are only checked for their schema, package and name
	// keys, which must be unique under case folding and strings.
	seen := map[string]bool{}
	for i, k := range root.keys {
		f := folder.String(k)
		if seen[f] {
			return false
		}
		seen[f] = true
		if (f == "schema" || f == "package" || f == "name") && (k != f || root.vals[i].kind != 's') {
			return false
		}
	}
	fr.others++
	return true
}

// fields returns the string values of a mapping whose keys must all be among
// allowed; other kinds of values are reported through nested.
func onlyKeys(n *ynode, allowed ...string) bool {
	if n == nil || n.kind != 'm' {
		return false
	}
next:
	for _, k := range n.keys {
		for _, a := range allowed {
			if k == a {
				continue next
			}
		}
		return false
	}
	return true
}

// str returns the string at key, "" when absent, and false when the value
// is not a string.
func str(n *ynode, key string) (string, bool) {
	v := n.get(key)
	if v == nil {
		return "", true
	}
	if v.kind != 's' {
		return "", false
	}
	return string(v.str), true
}

func strs(n *ynode, keys ...string) ([]string, bool) {
	out := make([]string, len(keys))
	for i, k := range keys {
		s, ok := str(n, k)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

func list(n *ynode, key string) ([]*ynode, bool) {
	v := n.get(key)
	if v == nil {
		return nil, true
	}
	if v.kind != 'l' {
		return nil, false
	}
	return v.items, true
}

func (fr *fileResult) fastPackage(at pos, n *ynode) bool {
	if !onlyKeys(n, "schema", "name", "defaultChannel", "icon", "description", "properties") {
		return false
	}
	s, ok := strs(n, "name", "defaultChannel", "description")
	if !ok || !fastProperties(n, false, nil) {
		return false
	}
	if icon := n.get("icon"); icon != nil {
		if !onlyKeys(icon, "base64data", "mediatype") {
			return false
		}
		parts, ok := strs(icon, "base64data", "mediatype")
		if !ok || !validBase64(parts[0]) {
			return false
		}
	}
	fr.packages = append(fr.packages, pkgRec{pos: at, name: s[0], defaultChannel: s[1]})
	return true
}

func (fr *fileResult) fastChannel(at pos, n *ynode) bool {
	if !onlyKeys(n, "schema", "name", "package", "entries", "properties") {
		return false
	}
	s, ok := strs(n, "name", "package")
	if !ok || !fastProperties(n, false, nil) {
		return false
	}
	items, ok := list(n, "entries")
	if !ok {
		return false
	}
	var entries []declcfg.ChannelEntry
	if items != nil {
		entries = make([]declcfg.ChannelEntry, 0, len(items))
	}
	for _, it := range items {
		if !onlyKeys(it, "name", "replaces", "skips", "skipRange") {
			return false
		}
		e, ok := strs(it, "name", "replaces", "skipRange")
		if !ok {
			return false
		}
		entry := declcfg.ChannelEntry{Name: e[0], Replaces: e[1], SkipRange: e[2]}
		skips, ok := list(it, "skips")
		if !ok {
			return false
		}
		// An empty list leaves Skips nil rather than empty: the model only
		// looks at the elements.
		for _, sk := range skips {
			if sk.kind != 's' {
				return false
			}
			entry.Skips = append(entry.Skips, string(sk.str))
		}
		entries = append(entries, entry)
	}
	fr.channels = append(fr.channels, chRec{pos: at, name: s[0], pkg: s[1], entries: entries})
	return true
}

func (fr *fileResult) fastBundle(at pos, n *ynode) bool {
	if !onlyKeys(n, "schema", "name", "package", "image", "properties", "relatedImages") {
		return false
	}
	s, ok := strs(n, "name", "package", "image")
	if !ok {
		return false
	}
	rec := bundleRec{pos: at, name: s[0], pkg: s[1], image: s[2]}
	if !fastProperties(n, true, &rec) {
		return false
	}
	items, ok := list(n, "relatedImages")
	if !ok {
		return false
	}
	for _, it := range items {
		if !onlyKeys(it, "name", "image") {
			return false
		}
		ri, ok := strs(it, "name", "image")
		if !ok {
			return false
		}
		rec.related = append(rec.related, declcfg.RelatedImage{Name: ri[0], Image: ri[1]})
	}
	fr.bundles = append(fr.bundles, rec)
	return true
}

func (fr *fileResult) fastDeprecation(at pos, n *ynode) bool {
	if !onlyKeys(n, "schema", "package", "entries") {
		return false
	}
	pkg, ok := str(n, "package")
	if !ok {
		return false
	}
	items, ok := list(n, "entries")
	if !ok {
		return false
	}
	var entries []declcfg.DeprecationEntry
	for _, it := range items {
		if !onlyKeys(it, "reference", "message") {
			return false
		}
		msg, ok := str(it, "message")
		ref := it.get("reference")
		if !ok || (ref != nil && !onlyKeys(ref, "schema", "name")) {
			return false
		}
		var e declcfg.DeprecationEntry
		e.Message = msg
		if ref != nil {
			r, ok := strs(ref, "schema", "name")
			if !ok {
				return false
			}
			e.Reference = declcfg.PackageScopedReference{Schema: r[0], Name: r[1]}
		}
		entries = append(entries, e)
	}
	fr.deps = append(fr.deps, depRec{pos: at, pkg: pkg, entries: entries})
	return true
}

// fastProperties checks a properties list. For a bundle (parse set) each
// value must also decode for its type, as opm's loader and converter
// require, and rec receives the olm.package values, the object count and
// the olm.maxOpenShiftVersion.
func fastProperties(n *ynode, parse bool, rec *bundleRec) bool {
	items, ok := list(n, "properties")
	if !ok {
		return false
	}
	for _, it := range items {
		if !onlyKeys(it, "type", "value") {
			return false
		}
		typ, ok := str(it, "type")
		v := it.get("value")
		if !ok || v == nil {
			return false
		}
		if !parse {
			continue
		}
		switch typ {
		case property.TypePackage:
			if !onlyKeys(v, "packageName", "version", "release") {
				return false
			}
			s, ok := strs(v, "packageName", "version", "release")
			if !ok {
				return false
			}
			rec.packages = append(rec.packages, property.Package{PackageName: s[0], Version: s[1], Release: s[2]})
		case property.TypeGVK, property.TypeGVKRequired:
			if !onlyKeys(v, "group", "kind", "version") {
				return false
			}
			if _, ok := strs(v, "group", "kind", "version"); !ok {
				return false
			}
		case property.TypePackageRequired:
			if !onlyKeys(v, "packageName", "versionRange") {
				return false
			}
			if _, ok := strs(v, "packageName", "versionRange"); !ok {
				return false
			}
		case property.TypeChannel:
			if !onlyKeys(v, "channelName") {
				return false
			}
			if _, ok := str(v, "channelName"); !ok {
				return false
			}
		case property.TypeBundleObject:
			if !onlyKeys(v, "data") {
				return false
			}
			d := v.get("data")
			if d == nil || d.kind != 's' || !validManifest(d.str) {
				return false
			}
			rec.objects++
		case property.TypeMaxOpenShiftVersion:
			// Any value loads; a scalar is kept as property.Parse
			// keeps it (the fast path has only strings and booleans).
			if rec.maxOCP == "" && (v.kind == 's' || v.kind == 'b') {
				rec.maxOCP = string(v.str)
			}
		case property.TypeCSVMetadata:
			if csvMetadataShape.fits(v) {
				continue
			}
			var buf bytes.Buffer
			w := bufio.NewWriter(&buf)
			writeCanonical(w, v)
			w.Flush()
			var md property.CSVMetadata
			if json.Unmarshal(buf.Bytes(), &md) != nil {
				return false
			}
		}
	}
	return true
}

func validBase64(s string) bool {
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}

// validManifest decodes base64 bundle object data and checks it as opm's
// loader does.
func validManifest(data []byte) bool {
	buf := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	n, err := base64.StdEncoding.Decode(buf, data)
	return err == nil && checkManifest(buf[:n]) == nil
}

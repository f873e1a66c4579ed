package mutate

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// mctx is what a mutator works on: the catalog copy and the case's RNG.
type mctx struct {
	c *catalog
	r *rand.Rand
}

func pick[T any](m *mctx, xs []T) T { return xs[m.r.IntN(len(xs))] }

// mutator is one named kind of change. apply edits m.c and returns a short
// description of what it changed, or false when the catalog offers nothing
// to change (the case is then not generated).
type mutator struct {
	name     string
	variants []string
	apply    func(m *mctx, variant string) (string, bool)
}

// Mutations lists the names of all mutation kinds with their variants, as
// "kind" or "kind:variant".
func Mutations() []string {
	var out []string
	for _, mu := range mutators {
		if len(mu.variants) == 0 {
			out = append(out, mu.name)
			continue
		}
		for _, v := range mu.variants {
			out = append(out, mu.name+":"+v)
		}
	}
	return out
}

// ---- shared pickers ----

type entryRef struct {
	ch blob
	e  map[string]any
}

func (m *mctx) allEntries() []entryRef {
	var out []entryRef
	for _, ch := range m.c.blobs(schemaChannel) {
		for _, e := range entries(ch.obj()) {
			out = append(out, entryRef{ch, e})
		}
	}
	return out
}

// bundlesWithPkgValue lists bundles that have an olm.package property whose
// value is an object.
func (m *mctx) bundlesWithPkgValue() []blob {
	var out []blob
	for _, b := range m.c.blobs(schemaBundle) {
		if pkgValue(b.obj()) != nil {
			out = append(out, b)
		}
	}
	return out
}

// yamlDocs lists structured documents stored in YAML files.
func (m *mctx) yamlBlobs(schemas ...string) []blob {
	var out []blob
	for _, b := range m.c.blobs(schemas...) {
		if b.f.kind == kindYAML {
			out = append(out, b)
		}
	}
	return out
}

func (m *mctx) filesOf(kinds ...fileKind) []*file {
	var out []*file
	for _, f := range m.c.files {
		for _, k := range kinds {
			if f.kind == k {
				out = append(out, f)
			}
		}
	}
	return out
}

// deprecationFor returns the olm.deprecations blob of pkg, creating an empty
// one next to the package blob when there is none.
func (m *mctx) deprecationFor(pkg string) (blob, bool) {
	if ds := m.c.ofPackage(schemaDeprecation, pkg); len(ds) > 0 {
		return ds[0], true
	}
	pb, ok := m.c.packageBlob(pkg)
	if !ok {
		return blob{}, false
	}
	d := &doc{obj: map[string]any{"schema": schemaDeprecation, "package": pkg, "entries": []any{}}}
	pb.f.docs = append(pb.f.docs, d)
	return blob{pb.f, d}, true
}

func appendDepEntry(dep blob, schema, name, message string) {
	ref := map[string]any{}
	if schema != "" {
		ref["schema"] = schema
	}
	if name != "" {
		ref["name"] = name
	}
	es := getList(dep.obj(), "entries")
	es = append(es, map[string]any{"reference": ref, "message": message})
	set(dep.obj(), "entries", es)
}

func hasDepRef(dep blob, schema, name string) map[string]any {
	for _, e := range maps(getList(dep.obj(), "entries")) {
		ref, _ := get(e, "reference").(map[string]any)
		if ref != nil && getStr(ref, "schema") == schema && getStr(ref, "name") == name {
			return e
		}
	}
	return nil
}

// ---- the image references used by image and relatedImages mutations ----

var imageRefs = map[string]string{
	"upper-repo":   "quay.io/Example/foo:v1",
	"space":        "quay.io/example/foo bar:v1",
	"sha-short":    "quay.io/example/foo@sha256:abc",
	"sha-63":       "quay.io/example/foo@sha256:" + strings.Repeat("a", 63),
	"md5":          "quay.io/example/foo@md5:d41d8cd98f00b204e9800998ecf8427e",
	"scheme":       "https://quay.io/example/foo:v1",
	"trailing-col": "quay.io/example/foo:",
	"hex64-repo":   strings.Repeat("ab", 32),
	"long-tag":     "quay.io/example/foo:" + strings.Repeat("t", 129),
	"ok-bare":      "foo",
	"ok-localhost": "localhost:5000/foo",
	"ok-upper-tag": "quay.io/example/foo:V1.0",
	"ok-tag-sha":   "quay.io/example/foo:v1@sha256:" + strings.Repeat("0123456789abcdef", 4),
}

var imageVariants = []string{"upper-repo", "space", "sha-short", "sha-63", "md5", "scheme", "trailing-col", "hex64-repo", "long-tag", "ok-bare", "ok-localhost", "ok-upper-tag", "ok-tag-sha"}

// ---- the mutators ----

var mutators = []mutator{
	{name: "drop-blob", variants: knownSchemas, apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(v)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		b.remove()
		return b.ident(), true
	}},
	{name: "dup-blob", variants: []string{"same-file", "other-file", "new-file"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.known()
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		d := b.d.clone()
		switch v {
		case "same-file":
			b.insertAfter(d)
			return b.ident(), true
		case "other-file":
			var others []*file
			for _, f := range m.filesOf(kindYAML, kindJSON) {
				if f != b.f {
					others = append(others, f)
				}
			}
			if len(others) == 0 {
				return "", false
			}
			f := pick(m, others)
			f.docs = append(f.docs, d)
			return b.ident() + " into " + f.path, true
		default:
			p := m.c.uniquePath(siblingPath(b.f.path, "zz-dup"+extFor(b.f.kind)))
			k := b.f.kind
			m.c.addFile(&file{path: p, kind: k, docs: []*doc{d}})
			return b.ident() + " into " + p, true
		}
	}},
	{name: "dup-package-across-files", variants: []string{"existing-file", "new-dir"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaPackage)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		d := b.d.clone()
		if v == "existing-file" {
			var others []*file
			for _, f := range m.filesOf(kindYAML, kindJSON) {
				if f != b.f {
					others = append(others, f)
				}
			}
			if len(others) == 0 {
				return "", false
			}
			f := pick(m, others)
			f.docs = append(f.docs, d)
			return b.ident() + " into " + f.path, true
		}
		p := m.c.uniquePath("zz-copy/package.yaml")
		m.c.addFile(&file{path: p, kind: kindYAML, docs: []*doc{{obj: deepCopy(b.obj()).(map[string]any)}}})
		return b.ident() + " into " + p, true
	}},
	{name: "replaces", variants: []string{"missing", "self", "loop", "loop-to-head"}, apply: func(m *mctx, v string) (string, bool) {
		switch v {
		case "missing", "self":
			es := m.allEntries()
			if len(es) == 0 {
				return "", false
			}
			e := pick(m, es)
			name := getStr(e.e, "name")
			target := name
			if v == "missing" {
				target = name + "-missing"
			}
			set(e.e, "replaces", target)
			return name, true
		case "loop":
			var chs []blob
			for _, ch := range m.c.blobs(schemaChannel) {
				if len(entries(ch.obj())) >= 2 {
					chs = append(chs, ch)
				}
			}
			if len(chs) == 0 {
				return "", false
			}
			ch := pick(m, chs)
			es := entries(ch.obj())
			i := m.r.IntN(len(es))
			j := (i + 1 + m.r.IntN(len(es)-1)) % len(es)
			set(es[i], "replaces", getStr(es[j], "name"))
			set(es[j], "replaces", getStr(es[i], "name"))
			return getStr(es[i], "name") + "<->" + getStr(es[j], "name"), true
		default:
			var chs []blob
			for _, ch := range m.c.blobs(schemaChannel) {
				if _, ok := channelHead(ch.obj()); ok && len(entries(ch.obj())) >= 2 {
					chs = append(chs, ch)
				}
			}
			if len(chs) == 0 {
				return "", false
			}
			ch := pick(m, chs)
			head, _ := channelHead(ch.obj())
			// The entry the chain ends at (no replaces, or a missing target).
			for _, e := range entries(ch.obj()) {
				if getStr(e, "name") != head && getStr(e, "replaces") == "" {
					set(e, "replaces", head)
					return getStr(e, "name") + "->" + head, true
				}
			}
			return "", false
		}
	}},
	{name: "skip", variants: []string{"self", "empty", "missing-ok"}, apply: func(m *mctx, v string) (string, bool) {
		es := m.allEntries()
		if len(es) == 0 {
			return "", false
		}
		e := pick(m, es)
		name := getStr(e.e, "name")
		var s string
		switch v {
		case "self":
			s = name
		case "empty":
			s = ""
		default:
			s = name + "-never-existed"
		}
		set(e.e, "skips", append(getList(e.e, "skips"), s))
		return name, true
	}},
	{name: "version", variants: []string{"v1.0.0", "1.0", "01.0.0", "1.0.0-", "empty", "unquoted-float", "missing", "1.0.0+", "1.0.0-01"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.bundlesWithPkgValue()
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		pv := pkgValue(b.obj())
		switch v {
		case "empty":
			set(pv, "version", "")
		case "missing":
			del(pv, "version")
		case "unquoted-float":
			set(pv, "version", m.c.token(b.d, "1.0", "1.0"))
		default:
			set(pv, "version", v)
		}
		return getStr(b.obj(), "name"), true
	}},
	{name: "skiprange", variants: []string{">=v1", "bad", "||", ">=1.0.0 <2.0.0", "<1.0.0 || >=1.5.0", "1.x"}, apply: func(m *mctx, v string) (string, bool) {
		es := m.allEntries()
		if len(es) == 0 {
			return "", false
		}
		e := pick(m, es)
		set(e.e, "skipRange", v)
		return getStr(e.e, "name"), true
	}},
	{name: "default-channel", variants: []string{"remove", "empty", "missing", "other"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaPackage)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		pkg := getStr(b.obj(), "name")
		switch v {
		case "remove":
			if !del(b.obj(), "defaultChannel") {
				return "", false
			}
		case "empty":
			set(b.obj(), "defaultChannel", "")
		case "missing":
			set(b.obj(), "defaultChannel", "no-such-channel")
		default:
			cur := getStr(b.obj(), "defaultChannel")
			var others []string
			for _, ch := range m.c.ofPackage(schemaChannel, pkg) {
				if n := getStr(ch.obj(), "name"); n != cur {
					others = append(others, n)
				}
			}
			if len(others) == 0 {
				return "", false
			}
			set(b.obj(), "defaultChannel", pick(m, others))
		}
		return pkg, true
	}},
	{name: "channel-rename", variants: []string{"default", "any"}, apply: func(m *mctx, v string) (string, bool) {
		var chs []blob
		for _, ch := range m.c.blobs(schemaChannel) {
			pb, ok := m.c.packageBlob(getStr(ch.obj(), "package"))
			if v == "any" || (ok && getStr(pb.obj(), "defaultChannel") == getStr(ch.obj(), "name")) {
				chs = append(chs, ch)
			}
		}
		if len(chs) == 0 {
			return "", false
		}
		ch := pick(m, chs)
		old := getStr(ch.obj(), "name")
		set(ch.obj(), "name", old+"-renamed")
		return old, true
	}},
	{name: "package-name", variants: []string{"Foo_Bar", "foo.bar", "64-chars", "63-chars-ok", "-leading-dash", "UPPER"}, apply: func(m *mctx, v string) (string, bool) {
		names := m.c.packageNames()
		if len(names) == 0 {
			return "", false
		}
		old := pick(m, names)
		var n string
		switch v {
		case "64-chars":
			n = strings.Repeat("a", 64)
		case "63-chars-ok":
			n = strings.Repeat("b", 63)
		case "-leading-dash":
			n = "-" + old
		case "UPPER":
			n = strings.ToUpper(old)
		default:
			n = v
		}
		m.c.renamePackage(old, n)
		return old, true
	}},
	{name: "package-rename-blob-only", apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaPackage)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		old := getStr(b.obj(), "name")
		set(b.obj(), "name", old+"-x")
		return old, true
	}},
	{name: "icon", variants: []string{"bad-base64", "bad-padding", "inner-space", "ok-svg", "ok-no-mediatype"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaPackage)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		icon := map[string]any{"mediatype": "image/png"}
		switch v {
		case "bad-base64":
			icon["base64data"] = "####"
		case "bad-padding":
			icon["base64data"] = "abc"
		case "inner-space":
			icon["base64data"] = "YW Jj"
		case "ok-svg":
			icon["base64data"] = base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))
			icon["mediatype"] = "image/svg+xml"
		default:
			icon = map[string]any{"base64data": "aGVsbG8="}
		}
		set(b.obj(), "icon", icon)
		return getStr(b.obj(), "name"), true
	}},
	{name: "deprecation", variants: []string{"unknown-bundle", "channel-only-entry", "unknown-channel", "package-named", "unknown-schema", "empty-message", "no-schema", "dup-entry", "unknown-package", "no-package", "second-blob", "entries-empty", "message-yaml-bool", "default-channel-invented"}, apply: func(m *mctx, v string) (string, bool) {
		names := m.c.packageNames()
		if len(names) == 0 {
			return "", false
		}
		pkg := pick(m, names)
		dep, ok := m.deprecationFor(pkg)
		if !ok {
			return "", false
		}
		switch v {
		case "unknown-bundle":
			appendDepEntry(dep, schemaBundle, pkg+".v0.0.0-missing", "gone")
		case "channel-only-entry":
			// A name that is a channel entry but has no olm.bundle blob is
			// still "bundle not found" (C26); add such an entry first.
			chs := m.c.ofPackage(schemaChannel, pkg)
			if len(chs) == 0 {
				return "", false
			}
			ch := pick(m, chs)
			ghost := pkg + ".v77.0.0-entry-only"
			set(ch.obj(), "entries", append(getList(ch.obj(), "entries"), map[string]any{"name": ghost}))
			appendDepEntry(dep, schemaBundle, ghost, "m")
		case "unknown-channel":
			appendDepEntry(dep, schemaChannel, "no-such-channel", "gone")
		case "package-named":
			appendDepEntry(dep, schemaPackage, pkg, "named")
		case "unknown-schema":
			appendDepEntry(dep, "olm.foo", "x", "what")
		case "empty-message":
			var refs [][2]string
			if hasDepRef(dep, schemaPackage, "") == nil {
				refs = append(refs, [2]string{schemaPackage, ""})
			}
			for _, ch := range m.c.ofPackage(schemaChannel, pkg) {
				refs = append(refs, [2]string{schemaChannel, getStr(ch.obj(), "name")})
			}
			for _, b := range m.c.ofPackage(schemaBundle, pkg) {
				refs = append(refs, [2]string{schemaBundle, getStr(b.obj(), "name")})
			}
			if len(refs) == 0 {
				return "", false
			}
			ref := pick(m, refs)
			if e := hasDepRef(dep, ref[0], ref[1]); e != nil {
				set(e, "message", "")
			} else {
				appendDepEntry(dep, ref[0], ref[1], "")
			}
			return pkg + " " + ref[0] + " " + ref[1], true
		case "no-schema":
			appendDepEntry(dep, "", "x", "no schema")
		case "dup-entry":
			es := getList(dep.obj(), "entries")
			if len(es) == 0 {
				appendDepEntry(dep, schemaPackage, "", "first")
				es = getList(dep.obj(), "entries")
			}
			set(dep.obj(), "entries", append(es, deepCopy(pick(m, es))))
		case "unknown-package":
			set(dep.obj(), "package", "no-such-package")
		case "no-package":
			del(dep.obj(), "package")
		case "second-blob":
			d := &doc{obj: map[string]any{"schema": schemaDeprecation, "package": pkg, "entries": []any{}}}
			fs := m.filesOf(kindYAML, kindJSON)
			f := pick(m, fs)
			f.docs = append(f.docs, d)
			return pkg + " in " + f.path, true
		case "entries-empty":
			set(dep.obj(), "entries", []any{})
		case "message-yaml-bool":
			if dep.f.kind != kindYAML {
				return "", false
			}
			appendDepEntry(dep, schemaPackage, "", "")
			es := maps(getList(dep.obj(), "entries"))
			set(es[len(es)-1], "message", m.c.token(dep.d, "y", "true"))
		case "default-channel-invented":
			// Point the default channel at a channel that does not exist and
			// deprecate it: opm invents the channel, so C27 passes.
			pb, _ := m.c.packageBlob(pkg)
			set(pb.obj(), "defaultChannel", "invented")
			appendDepEntry(dep, schemaChannel, "invented", "deprecated")
		}
		return pkg, true
	}},
	{name: "entry-without-bundle", variants: []string{"last-channel", "non-last-channel"}, apply: func(m *mctx, v string) (string, bool) {
		type cand struct {
			pkg string
			chs []blob
		}
		var cands []cand
		for _, pkg := range m.c.packageNames() {
			chs := m.c.ofPackage(schemaChannel, pkg)
			if (v == "last-channel" && len(chs) >= 1) || len(chs) >= 2 {
				cands = append(cands, cand{pkg, chs})
			}
		}
		if len(cands) == 0 {
			return "", false
		}
		cd := pick(m, cands)
		ch := cd.chs[len(cd.chs)-1]
		if v != "last-channel" {
			ch = pick(m, cd.chs[:len(cd.chs)-1])
		}
		ghost := cd.pkg + ".v99.0.0-ghost"
		e := map[string]any{"name": ghost}
		if head, ok := channelHead(ch.obj()); ok {
			e["replaces"] = head
		}
		set(ch.obj(), "entries", append(getList(ch.obj(), "entries"), e))
		return getStr(ch.obj(), "name"), true
	}},
	{name: "bundle-not-in-channel", variants: []string{"named", "no-name"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.bundlesWithPkgValue()
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		d := b.d.clone()
		pkg := getStr(b.obj(), "package")
		if v == "named" {
			set(d.obj, "name", pkg+".v98.0.0-orphan")
		} else {
			del(d.obj, "name")
		}
		set(pkgValue(d.obj), "version", "98.0.0-orphan")
		b.insertAfter(d)
		return getStr(b.obj(), "name"), true
	}},
	{name: "olm-package-property", variants: []string{"two-same", "two-different", "none", "type-case", "mismatch", "empty-name", "name-case"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.bundlesWithPkgValue()
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		o := b.obj()
		pv := pkgValue(o)
		switch v {
		case "two-same":
			addProperty(o, "olm.package", deepCopy(pv))
		case "two-different":
			pv2 := deepCopy(pv).(map[string]any)
			set(pv2, "version", "99.99.99")
			addProperty(o, "olm.package", pv2)
		case "none", "type-case":
			var kept []any
			for _, p := range getList(o, "properties") {
				pm, ok := p.(map[string]any)
				if ok && getStr(pm, "type") == "olm.package" {
					if v == "type-case" {
						set(pm, "type", "OLM.package")
						kept = append(kept, pm)
					}
					continue
				}
				kept = append(kept, p)
			}
			if kept == nil {
				kept = []any{}
			}
			set(o, "properties", kept)
		case "mismatch":
			set(pv, "packageName", "some-other-package")
		case "empty-name":
			set(pv, "packageName", "")
		default:
			n := getStr(pv, "packageName")
			if n == "" {
				return "", false
			}
			set(pv, "packageName", strings.ToUpper(n[:1])+n[1:])
		}
		return getStr(o, "name"), true
	}},
	{name: "image", variants: append([]string{"remove", "empty"}, imageVariants...), apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaBundle)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		switch v {
		case "remove":
			del(b.obj(), "image")
		case "empty":
			set(b.obj(), "image", "")
		default:
			set(b.obj(), "image", imageRefs[v])
		}
		return getStr(b.obj(), "name"), true
	}},
	{name: "related-image", variants: append([]string{"empty"}, imageVariants...), apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaBundle)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		ref := imageRefs[v]
		ris := getList(b.obj(), "relatedImages")
		if len(ris) > 0 && m.r.IntN(2) == 0 {
			if ri, ok := pick(m, ris).(map[string]any); ok {
				set(ri, "image", ref)
				return getStr(b.obj(), "name"), true
			}
		}
		set(b.obj(), "relatedImages", append(ris, map[string]any{"name": "extra", "image": ref}))
		return getStr(b.obj(), "name"), true
	}},
	{name: "yaml-bool-name", variants: []string{"on", "y", "N", "yes", "OFF", "True", "yEs"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.yamlBlobs(knownSchemas...)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		o := b.obj()
		jsonText := "true"
		if strings.EqualFold(v, "n") || strings.EqualFold(v, "off") || strings.EqualFold(v, "no") {
			jsonText = "false"
		}
		if v == "yEs" {
			jsonText = `"yEs"` // mixed case stays a string
		}
		tok := m.c.token(b.d, v, jsonText)
		switch getStr(o, "schema") {
		case schemaChannel:
			if es := entries(o); len(es) > 0 && m.r.IntN(2) == 0 {
				e := pick(m, es)
				set(e, "name", tok)
				return "entry " + b.ident(), true
			}
			set(o, "name", tok)
		case schemaDeprecation:
			es := maps(getList(o, "entries"))
			if len(es) == 0 {
				return "", false
			}
			set(pick(m, es), "message", tok)
		default:
			set(o, "name", tok)
		}
		return b.ident(), true
	}},
	{name: "case-key", variants: []string{"Schema", "SCHEMA", "Name", "Package", "DefaultChannel", "Entries", "dup-schema", "dup-name", "dup-package"}, apply: func(m *mctx, v string) (string, bool) {
		key := strings.ToLower(strings.TrimPrefix(v, "dup-"))
		if key == "defaultchannel" {
			key = "defaultChannel"
		}
		var bs []blob
		for _, b := range m.c.known() {
			if rk, ok := realKey(b.obj(), key); ok && rk == key {
				bs = append(bs, b)
			}
		}
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		o := b.obj()
		val := o[key]
		if strings.HasPrefix(v, "dup-") {
			up := strings.ToUpper(key[:1]) + key[1:]
			o[up] = val
		} else {
			delete(o, key)
			o[v] = val
		}
		return b.ident(), true
	}},
	{name: "comment-only-doc", variants: []string{"first", "middle", "last"}, apply: func(m *mctx, v string) (string, bool) {
		fs := m.filesOf(kindYAML)
		if len(fs) == 0 {
			return "", false
		}
		f := pick(m, fs)
		i := 0
		switch v {
		case "middle":
			if len(f.docs) < 2 {
				return "", false
			}
			i = 1 + m.r.IntN(len(f.docs)-1)
		case "last":
			i = len(f.docs)
		}
		d := &doc{raw: "# this document holds only a comment\n"}
		docs := append([]*doc{}, f.docs[:i]...)
		docs = append(docs, d)
		f.docs = append(docs, f.docs[i:]...)
		return f.path, true
	}},
	{name: "separator", variants: []string{"--- foo", "--- # comment", "---   ", "----", "---\tx"}, apply: func(m *mctx, v string) (string, bool) {
		var cands []*doc
		var paths []string
		for _, f := range m.filesOf(kindYAML) {
			for _, d := range f.docs {
				cands = append(cands, d)
				paths = append(paths, f.path)
			}
		}
		if len(cands) == 0 {
			return "", false
		}
		i := m.r.IntN(len(cands))
		cands[i].sep = v
		return paths[i], true
	}},
	{name: "json-trailing-comma", variants: []string{"first", "last"}, apply: func(m *mctx, v string) (string, bool) {
		fs := m.filesOf(kindJSON)
		var cands []*file
		for _, f := range fs {
			if len(f.docs) > 0 {
				cands = append(cands, f)
			}
		}
		if len(cands) == 0 {
			return "", false
		}
		f := pick(m, cands)
		i := 0
		if v == "last" {
			i = len(f.docs) - 1
		}
		f.docs[i].trailingComma = true
		return f.path, true
	}},
	{name: "json-then-yaml", variants: []string{"after-1", "after-2"}, apply: func(m *mctx, v string) (string, bool) {
		n := 1
		if v == "after-2" {
			n = 2
		}
		var cands []*file
		for _, f := range m.filesOf(kindJSON) {
			if len(f.docs) > n {
				cands = append(cands, f)
			}
		}
		if len(cands) == 0 {
			return "", false
		}
		f := pick(m, cands)
		f.yamlAfter = n
		return f.path, true
	}},
	{name: "schema", variants: []string{"olm.pakage", "olm.chanel", "olm.bundel", "olm.deprecation", "OLM.Package", "empty", "missing", "number"}, apply: func(m *mctx, v string) (string, bool) {
		var bs []blob
		switch v {
		case "olm.pakage", "OLM.Package":
			bs = m.c.blobs(schemaPackage)
		case "olm.chanel":
			bs = m.c.blobs(schemaChannel)
		case "olm.bundel":
			bs = m.c.blobs(schemaBundle)
		case "olm.deprecation":
			bs = m.c.blobs(schemaDeprecation)
		default:
			bs = m.c.known()
		}
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		id := b.ident()
		switch v {
		case "empty":
			set(b.obj(), "schema", "")
		case "missing":
			del(b.obj(), "schema")
		case "number":
			set(b.obj(), "schema", 5)
		default:
			set(b.obj(), "schema", v)
		}
		return id, true
	}},
	{name: "unknown-field", variants: []string{"blob", "entry", "property-value", "deprecation-reference", "icon"}, apply: func(m *mctx, v string) (string, bool) {
		extra := map[string]any{"note": "not part of the schema", "n": 3}
		switch v {
		case "blob":
			bs := m.c.known()
			if len(bs) == 0 {
				return "", false
			}
			b := pick(m, bs)
			b.obj()["xExtraField"] = extra
			return b.ident(), true
		case "entry":
			es := m.allEntries()
			if len(es) == 0 {
				return "", false
			}
			e := pick(m, es)
			e.e["xExtra"] = "yes"
			return getStr(e.e, "name"), true
		case "property-value":
			bs := m.bundlesWithPkgValue()
			if len(bs) == 0 {
				return "", false
			}
			b := pick(m, bs)
			pkgValue(b.obj())["xExtra"] = []any{"a", "b"}
			return getStr(b.obj(), "name"), true
		case "deprecation-reference":
			var refs []map[string]any
			for _, d := range m.c.blobs(schemaDeprecation) {
				for _, e := range maps(getList(d.obj(), "entries")) {
					if r, ok := get(e, "reference").(map[string]any); ok {
						refs = append(refs, r)
					}
				}
			}
			if len(refs) == 0 {
				return "", false
			}
			pick(m, refs)["xExtra"] = 1
			return "", true
		default:
			bs := m.c.blobs(schemaPackage)
			if len(bs) == 0 {
				return "", false
			}
			b := pick(m, bs)
			set(b.obj(), "icon", map[string]any{"base64data": "aGk=", "mediatype": "image/png", "xSize": 16})
			return b.ident(), true
		}
	}},
	{name: "release", variants: []string{"1", "01", "a_b", "21-chars", "20-chars", "1..2", "1+b", "x.01.a_b", "normalized"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.bundlesWithPkgValue()
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		pv := pkgValue(b.obj())
		name := getStr(b.obj(), "name")
		switch v {
		case "21-chars":
			set(pv, "release", strings.Repeat("r", 21))
		case "20-chars":
			set(pv, "release", strings.Repeat("r", 20))
		case "normalized":
			ver := getStr(pv, "version")
			pkg := getStr(b.obj(), "package")
			if ver == "" || strings.Contains(ver, "+") || pkg == "" {
				return "", false
			}
			set(pv, "release", "2")
			m.c.renameBundle(pkg, name, pkg+"-v"+ver+"-2")
		default:
			set(pv, "release", v)
		}
		return name, true
	}},
	{name: "olm-channel-property", variants: []string{"priority-string", "priority-int", "no-priority", "name-number"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaBundle)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		val := map[string]any{"channelName": "stable"}
		switch v {
		case "priority-string":
			val["priority"] = "high"
		case "priority-int":
			val["priority"] = 2
		case "name-number":
			val["channelName"] = 5
		}
		addProperty(b.obj(), "olm.channel", val)
		return getStr(b.obj(), "name"), true
	}},
	{name: "unknown-schema-blob", variants: []string{"dangling-package", "no-package"}, apply: func(m *mctx, v string) (string, bool) {
		fs := m.filesOf(kindYAML, kindJSON)
		if len(fs) == 0 {
			return "", false
		}
		f := pick(m, fs)
		o := map[string]any{"schema": "io.example.thing", "name": "thing", "spec": map[string]any{"list": []any{1, "two"}}}
		if v == "dangling-package" {
			o["package"] = "no-such-package"
		}
		f.docs = append(f.docs, &doc{obj: o})
		return f.path, true
	}},
	{name: "extra-file", variants: []string{"empty", "separators-only", "whitespace", "readme-prose", "readme-ignored", "heading-only", "json-null", "yaml-list"}, apply: func(m *mctx, v string) (string, bool) {
		var p, content string
		switch v {
		case "empty":
			p, content = "zz-empty.yaml", ""
		case "separators-only":
			p, content = "zz-seps.yaml", "---\n---\n"
		case "whitespace":
			p, content = "zz-ws.json", "  \n\n\t\n"
		case "readme-prose", "readme-ignored":
			p, content = "README.md", "This is a catalog.\n"
		case "heading-only":
			p, content = "NOTES.md", "# Notes\n"
		case "json-null":
			p, content = "zz-null.json", "null\n"
		default:
			p, content = "zz-list.yaml", "- a\n- b\n"
		}
		if m.c.fileByPath(p) != nil {
			return "", false
		}
		m.c.addFile(&file{path: p, kind: kindOpaque, opaque: content})
		if v == "readme-ignored" {
			if f := m.c.fileByPath(".indexignore"); f != nil {
				f.opaque += "\nREADME.md\n"
			} else {
				m.c.addFile(&file{path: ".indexignore", kind: kindOpaque, opaque: "README.md\n"})
			}
		}
		return p, true
	}},
	{name: "dup-entry", apply: func(m *mctx, v string) (string, bool) {
		var chs []blob
		for _, ch := range m.c.blobs(schemaChannel) {
			if len(entries(ch.obj())) > 0 {
				chs = append(chs, ch)
			}
		}
		if len(chs) == 0 {
			return "", false
		}
		ch := pick(m, chs)
		es := getList(ch.obj(), "entries")
		e := pick(m, es)
		set(ch.obj(), "entries", append(es, deepCopy(e)))
		return ch.ident(), true
	}},
	{name: "channel-field", variants: []string{"no-name", "unknown-package", "package-case", "no-entries", "entries-empty", "entries-string"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaChannel)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		o := b.obj()
		id := b.ident()
		switch v {
		case "no-name":
			del(o, "name")
		case "unknown-package":
			set(o, "package", "no-such-package")
		case "package-case":
			p := getStr(o, "package")
			if p == "" {
				return "", false
			}
			set(o, "package", strings.ToUpper(p[:1])+p[1:])
		case "no-entries":
			del(o, "entries")
		case "entries-empty":
			set(o, "entries", []any{})
		default:
			set(o, "entries", "not-a-list")
		}
		return id, true
	}},
	{name: "bundle-field", variants: []string{"no-package", "unknown-package", "no-name", "properties-object", "properties-empty"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaBundle)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		o := b.obj()
		id := b.ident()
		switch v {
		case "no-package":
			del(o, "package")
		case "unknown-package":
			set(o, "package", "no-such-package")
		case "no-name":
			del(o, "name")
		case "properties-object":
			set(o, "properties", map[string]any{"type": "olm.package"})
		default:
			set(o, "properties", []any{})
		}
		return id, true
	}},
	{name: "dup-version", apply: func(m *mctx, v string) (string, bool) {
		type pair struct{ a, b blob }
		var pairs []pair
		for _, pkg := range m.c.packageNames() {
			var bs []blob
			for _, b := range m.c.ofPackage(schemaBundle, pkg) {
				if pkgValue(b.obj()) != nil {
					bs = append(bs, b)
				}
			}
			for i := 0; i+1 < len(bs); i++ {
				pairs = append(pairs, pair{bs[i], bs[i+1]})
			}
		}
		if len(pairs) == 0 {
			return "", false
		}
		p := pick(m, pairs)
		set(pkgValue(p.b.obj()), "version", getStr(pkgValue(p.a.obj()), "version"))
		return getStr(p.b.obj(), "name"), true
	}},
	{name: "drop-edge", variants: []string{"replaces", "skips"}, apply: func(m *mctx, v string) (string, bool) {
		var es []entryRef
		for _, e := range m.allEntries() {
			if (v == "replaces" && getStr(e.e, "replaces") != "") || (v == "skips" && len(getList(e.e, "skips")) > 0) {
				es = append(es, e)
			}
		}
		if len(es) == 0 {
			return "", false
		}
		e := pick(m, es)
		del(e.e, v)
		return getStr(e.e, "name"), true
	}},
	{name: "bundle-object", variants: []string{"bad-base64", "not-yaml", "not-object", "value-string"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaBundle)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		var val any
		switch v {
		case "bad-base64":
			val = map[string]any{"data": "!!!"}
		case "not-yaml":
			val = map[string]any{"data": base64.StdEncoding.EncodeToString([]byte("kind: [unclosed\n"))}
		case "not-object":
			val = map[string]any{"data": base64.StdEncoding.EncodeToString([]byte("- just\n- a list\n"))}
		default:
			val = "not-an-object"
		}
		for _, p := range properties(b.obj()) {
			if getStr(p, "type") == "olm.bundle.object" {
				set(p, "value", val)
				return getStr(b.obj(), "name"), true
			}
		}
		addProperty(b.obj(), "olm.bundle.object", val)
		return getStr(b.obj(), "name"), true
	}},
	{name: "property", variants: []string{"no-value", "gvk-wrong-type", "csv-metadata-wrong-type", "package-required-bad-range-ok", "custom-ok", "type-missing"}, apply: func(m *mctx, v string) (string, bool) {
		bs := m.c.blobs(schemaBundle)
		if len(bs) == 0 {
			return "", false
		}
		b := pick(m, bs)
		o := b.obj()
		switch v {
		case "no-value":
			ps := properties(o)
			if len(ps) == 0 {
				return "", false
			}
			del(pick(m, ps), "value")
		case "gvk-wrong-type":
			addProperty(o, "olm.gvk", map[string]any{"group": 5, "kind": "K", "version": "v1"})
		case "csv-metadata-wrong-type":
			addProperty(o, "olm.csv.metadata", map[string]any{"installModes": "x"})
		case "package-required-bad-range-ok":
			addProperty(o, "olm.package.required", map[string]any{"packageName": "other", "versionRange": "not a range"})
		case "custom-ok":
			addProperty(o, "io.example.custom", []any{1, map[string]any{"a": "b"}})
		default:
			props := getList(o, "properties")
			set(o, "properties", append(props, map[string]any{"value": map[string]any{"a": 1}}))
		}
		return getStr(o, "name"), true
	}},
}

// Command specsubset writes the OpenAPI description the fake GitHub validates against: the shared
// subset of GitHub's description plus the operations the fake serves that the subset lacks, copied
// verbatim from GitHub's full description together with every component they reference.
//
// Re-run it from the module root after changing the operation list below:
//
//	go run ./webhook/githubtest/internal/specsubset \
//	    -base ../shared/github/github-bot-subset.openapi.json \
//	    -full ../shared/github/api.github.com.openapi.json.zst \
//	    -out webhook/githubtest/testdata/github-bot.openapi.json
//
// The full description may be given compressed (.zst) or not.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// operations are the "METHOD /path" pairs the fake serves. Those already in the base subset are
// kept as they are there; the others are taken from the full description.
var operations = []string{
	"POST /app/installations/{installation_id}/access_tokens",
	"GET /app/installations",
	"GET /installation/repositories",
	"GET /repos/{owner}/{repo}/installation",
	"GET /repos/{owner}/{repo}",
	"GET /repos/{owner}/{repo}/pulls",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/files",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/merge",
	"PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge",
	"GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
	"GET /repos/{owner}/{repo}/issues/{issue_number}/timeline",
	"POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
	"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
	"POST /repos/{owner}/{repo}/check-runs",
	"PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
	"GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
	"GET /repos/{owner}/{repo}/commits/{ref}/check-suites",
	"POST /repos/{owner}/{repo}/statuses/{sha}",
	"GET /repos/{owner}/{repo}/collaborators/{username}/permission",
	"GET /repos/{owner}/{repo}/contents/{path}",
	"GET /repos/{owner}/{repo}/rules/branches/{branch}",
	"POST /repos/{owner}/{repo}/git/blobs",
	"POST /repos/{owner}/{repo}/git/trees",
	"POST /repos/{owner}/{repo}/git/commits",
	"GET /repos/{owner}/{repo}/git/ref/{ref}",
	"POST /repos/{owner}/{repo}/git/refs",
	"PATCH /repos/{owner}/{repo}/git/refs/{ref}",
	"POST /repos/{owner}/{repo}/pulls",
	"PATCH /repos/{owner}/{repo}/pulls/{pull_number}",
	"POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
}

func main() {
	base := flag.String("base", "", "the shared subset (JSON)")
	full := flag.String("full", "", "GitHub's full description (JSON, or .zst)")
	out := flag.String("out", "", "where to write the result")
	flag.Parse()
	if *base == "" || *full == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: specsubset -base SUBSET.json -full FULL.json[.zst] -out OUT.json")
		os.Exit(2)
	}
	if err := run(*base, *full, *out); err != nil {
		slog.Error("specsubset failed", "err", err)
		os.Exit(1)
	}
}

func run(basePath, fullPath, outPath string) error {
	doc, err := readJSON(basePath)
	if err != nil {
		return err
	}
	src, err := readJSON(fullPath)
	if err != nil {
		return err
	}
	paths := object(doc, "paths")
	srcPaths := object(src, "paths")
	var added []string
	for _, op := range operations {
		method, path, _ := strings.Cut(op, " ")
		method = strings.ToLower(method)
		item := object(paths, path)
		if _, ok := item[method]; ok {
			continue
		}
		srcItem, ok := srcPaths[path].(map[string]any)
		if !ok || srcItem[method] == nil {
			return fmt.Errorf("%s is not in %s", op, fullPath)
		}
		item[method] = srcItem[method]
		if p, ok := srcItem["parameters"]; ok && item["parameters"] == nil {
			item["parameters"] = p
		}
		added = append(added, op)
	}
	n, err := closeRefs(doc, src)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encoding the result: %w", err)
	}
	if err := os.WriteFile(outPath, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", outPath, err)
	}
	slog.Info("wrote the description", "out", outPath, "operations_added", len(added), "components_added", n)
	for _, op := range added {
		slog.Info("added", "operation", op)
	}
	return nil
}

// closeRefs copies into doc every component that doc references, transitively, from src.
func closeRefs(doc, src map[string]any) (int, error) {
	added := 0
	for {
		var missing []string
		seen := map[string]bool{}
		walkRefs(doc, func(ref string) {
			if seen[ref] {
				return
			}
			seen[ref] = true
			if lookup(doc, ref) == nil {
				missing = append(missing, ref)
			}
		})
		if len(missing) == 0 {
			return added, nil
		}
		sort.Strings(missing)
		for _, ref := range missing {
			v := lookup(src, ref)
			if v == nil {
				return added, fmt.Errorf("%s is referenced but not in the full description", ref)
			}
			parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
			parent := doc
			for _, p := range parts[:len(parts)-1] {
				parent = object(parent, unescape(p))
			}
			parent[unescape(parts[len(parts)-1])] = v
			added++
		}
	}
}

func walkRefs(v any, f func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				f(s)
				continue
			}
			walkRefs(x, f)
		}
	case []any:
		for _, x := range v {
			walkRefs(x, f)
		}
	}
}

func lookup(doc map[string]any, ref string) any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var cur any = doc
	for _, p := range strings.Split(ref[2:], "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[unescape(p)]
	}
	return cur
}

func unescape(p string) string {
	return strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
}

// object returns m[key] as an object, creating it.
func object(m map[string]any, key string) map[string]any {
	if o, ok := m[key].(map[string]any); ok {
		return o
	}
	o := map[string]any{}
	m[key] = o
	return o
}

func readJSON(path string) (map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".zst") {
		zr, err := zstd.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("decompressing %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return doc, nil
}

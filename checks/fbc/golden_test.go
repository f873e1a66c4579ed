package fbc_test

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

type goldenCase struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Files       map[string]string `json:"files"`
	RC          int               `json:"rc"`
	Message     string            `json:"message"`
}

func loadGolden(t testing.TB) []goldenCase {
	t.Helper()
	data, err := os.ReadFile("testdata/opm-validate-golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	return doc.Cases
}

func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, content := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
	}
	return fsys
}

// TestGolden checks every recorded opm verdict and message. Error trees are
// compared with unordered siblings, since opm's own order is random.
func TestGolden(t *testing.T) {
	for _, tc := range loadGolden(t) {
		t.Run(tc.Name, func(t *testing.T) {
			res, err := fbc.Validate(context.Background(), mapFS(tc.Files), fbc.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rc := 0
			if !res.Valid() {
				rc = 1
			}
			if rc != tc.RC {
				t.Fatalf("rc = %d, want %d\ngot message:\n%s\nwant:\n%s", rc, tc.RC, res.OPMMessage, tc.Message)
			}
			if got, want := canonicalMessage(res.OPMMessage), canonicalMessage(tc.Message); got != want {
				t.Errorf("message mismatch\ngot:\n%s\nwant:\n%s", res.OPMMessage, tc.Message)
			}
			errs := 0
			for _, f := range res.Findings {
				if f.Severity == "error" {
					errs++
					if f.File == "" || f.Line < 1 && f.Rule != "L0" {
						t.Errorf("finding without a position: %+v", f)
					}
				}
			}
			if (errs > 0) != (rc == 1) {
				t.Errorf("%d error findings for rc %d: %+v", errs, rc, res.Findings)
			}
		})
	}
}

// canonicalMessage returns a tree message with every level's children
// sorted, and any other message unchanged.
func canonicalMessage(msg string) string {
	if !strings.HasPrefix(msg, "invalid index") {
		return msg
	}
	type tnode struct {
		text     string
		children []*tnode
	}
	root := &tnode{}
	stack := []*tnode{root}
	for _, line := range strings.Split(msg, "\n") {
		depth := 0
		rest := line
		for {
			switch {
			case strings.HasPrefix(rest, "│   "), strings.HasPrefix(rest, "    "):
				rest = strings.TrimPrefix(strings.TrimPrefix(rest, "│   "), "    ")
				depth++
				continue
			case strings.HasPrefix(rest, "├── "), strings.HasPrefix(rest, "└── "):
				rest = strings.TrimPrefix(strings.TrimPrefix(rest, "├── "), "└── ")
				depth++
			}
			break
		}
		n := &tnode{text: strings.TrimSuffix(rest, ":")}
		stack = stack[:depth+1]
		parent := stack[depth]
		parent.children = append(parent.children, n)
		stack = append(stack, n)
	}
	var render func(n *tnode, indent string) string
	render = func(n *tnode, indent string) string {
		var parts []string
		for _, c := range n.children {
			parts = append(parts, render(c, indent+"  "))
		}
		sort.Strings(parts)
		return indent + n.text + "\n" + strings.Join(parts, "")
	}
	return render(root, "")
}

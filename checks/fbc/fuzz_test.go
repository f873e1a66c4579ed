package fbc_test

import (
	"context"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
)

// hostileSeeds are inputs that have broken YAML and JSON loaders elsewhere:
// deep nesting, alias expansion, huge scalars, invalid UTF-8 and NUL bytes.
func hostileSeeds() []string {
	return []string{
		validCatalog,
		`{"schema":"olm.package","name":"foo","defaultChannel":"stable"}` + "\n" + `{"schema":"olm.channel",}`,
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
		strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000),
		strings.Repeat("- ", 5000) + "x",
		"a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
			"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n" +
			"g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n",
		"schema: olm.package\nname: " + strings.Repeat("x", 1<<20) + "\n",
		"schema: \xff\xfe\nname: foo\n",
		"schema: olm.package\x00\nname: foo\n",
		"\ufeff---\r\nschema: olm.package\r\nname: foo\r\n",
		"--- foo\nschema: x\n",
		"# only a comment\n",
		"null",
		"{\"schema\":\"olm.bundle\",\"properties\":[{\"type\":\"olm.bundle.object\",\"value\":{\"data\":\"e30=\"}}]}",
	}
}

// FuzzValidate feeds arbitrary bytes to the loader and validator. They must
// never panic, must agree with themselves between runs, and an invalid
// verdict must come with at least one error finding (and a valid one with
// none).
func FuzzValidate(f *testing.F) {
	for _, s := range hostileSeeds() {
		f.Add(s, "catalog.yaml")
	}
	f.Add(`{"schema":"olm.package","name":"foo"}`, "x.json")
	f.Fuzz(func(t *testing.T, content, name string) {
		if name == "" || strings.ContainsAny(name, "/\\\x00") || name == "." || name == ".." {
			name = "catalog.yaml"
		}
		fsys := mapFS(map[string]string{name: content, "other/catalog.yaml": validCatalog})
		res, err := fbc.Validate(context.Background(), fsys, fbc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		errs := 0
		for _, f := range res.Findings {
			if f.Severity == checks.SeverityError {
				errs++
			}
		}
		if res.Valid() != (errs == 0) {
			t.Fatalf("valid=%v with %d error findings; opm message %q", res.Valid(), errs, res.OPMMessage)
		}
		// Runs agree, except where opm itself is random: YAML flow mappings
		// whose keys collide once converted to JSON keep either value.
		for i := 0; i < 10; i++ {
			again, err := fbc.Validate(context.Background(), fsys, fbc.Options{Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			if again.OPMMessage == res.OPMMessage && len(again.Findings) == len(res.Findings) {
				return
			}
		}
		t.Fatalf("nondeterministic: %q", res.OPMMessage)
	})
}

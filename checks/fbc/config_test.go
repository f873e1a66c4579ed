package fbc_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

func TestLoadConfig(t *testing.T) {
	files := map[string]string{
		"foo/catalog.yaml": validCatalog + "---\nschema: custom.thing\npackage: foo\nzeta: 1\nalpha: [x]\n",
	}
	cfg, err := fbc.LoadConfig(context.Background(), mapFS(files))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Packages) != 1 || len(cfg.Channels) != 1 || len(cfg.Bundles) != 1 || len(cfg.Others) != 1 {
		t.Fatalf("config %+v", cfg)
	}
	if got := cfg.Bundles[0].Properties[0].Type; got != "olm.package" {
		t.Errorf("bundle property type %q", got)
	}
	other, _ := json.Marshal(cfg.Others[0])
	if want := `{"alpha":["x"],"package":"foo","schema":"custom.thing","zeta":1}`; string(other) != want+"\n" && string(other) != want {
		t.Errorf("other blob %s, want %s", other, want)
	}

	// Loading fails as opm's loader does: on the first error, with its text.
	files["bad.yaml"] = "schema: olm.package\nname: [\n"
	if _, err := fbc.LoadConfig(context.Background(), mapFS(files)); err == nil || err.Error() != "error converting YAML to JSON: yaml: line 2: did not find expected node content" {
		t.Errorf("err = %v", err)
	}
}

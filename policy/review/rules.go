package review

import (
	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/olmv1"
	"github.com/catalogbot/catalogbot/checks/release"
	"github.com/catalogbot/catalogbot/checks/truth"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
	"github.com/catalogbot/catalogbot/publisher/template"
)

// Rules is the catalogue of every rule a review can report, for SARIF's
// tool.driver.rules: the opm rules (L, C, M), the policy file (P), OWNERS
// (OW), catalog.yaml (CY), images (IM), references (RF), package layout
// (PK), the limits of one check (LM), catalog templates (TP), the release
// guard (RG), OLM v1 readiness (V) and bundle truthfulness (BT). docs/rules.md documents the scheme;
// TestRuleIDs holds every id to it.
func Rules() []checks.Rule {
	var out []checks.Rule
	for _, rs := range [][]checks.Rule{
		fbc.Rules(), policy.Rules, owners.Rules, catalogyaml.Rules, images.Rules, pipeline.Rules, template.Rules, release.Rules, olmv1.Rules, truth.Rules,
	} {
		out = append(out, rs...)
	}
	return out
}

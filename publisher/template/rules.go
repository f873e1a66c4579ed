package template

import "github.com/catalogbot/catalogbot/checks"

// Rule ids of a template's own problems (docs/rules.md, family TP).
const (
	RuleSyntax = "TP1"
	RuleSchema = "TP2"
	RuleField  = "TP3"
	RuleBundle = "TP4"
)

// Rules is the catalogue of the template rules.
var Rules = []checks.Rule{
	{ID: RuleSyntax, Name: "TemplateSyntax", Description: "A catalog template is not well-formed YAML or JSON."},
	{ID: RuleSchema, Name: "TemplateSchema", Description: "A catalog template has no schema, or one that is not olm.template.basic or olm.semver (or not the type asked for)."},
	{ID: RuleField, Name: "TemplateField", Description: "A catalog template field is unknown, repeated, of the wrong type or inconsistent with another, or an entry does not load."},
	{ID: RuleBundle, Name: "TemplateBundle", Description: "A bundle a catalog template names does not render to one bundle image, or its version or package does not fit the template, or the template names too many bundle images."},
}

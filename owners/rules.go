package owners

import "github.com/catalogbot/catalogbot/checks"

// Rule ids of the findings this package reports, for OWNERS, OWNERS_ALIASES
// and the packages' ci.yaml files alike. Errors make the file they are found
// in unusable, and block approval of every path it governs; the
// rest are warnings that change nothing but point at a likely mistake.
const (
	RuleSyntax        = "OW1"  // not YAML, more than one document, or too large
	RuleStructure     = "OW2"  // a value of the wrong kind: a string where a list belongs, a non-boolean option
	RuleMixedForms    = "OW3"  // top-level owners keys and filters in one file
	RuleFilterRegex   = "OW4"  // a filter that is not a valid regular expression
	RuleDuplicateKey  = "OW5"  // a key given twice
	RuleUnknownKey    = "OW6"  // a key the format does not have; ignored
	RuleLogin         = "OW7"  // a name that is neither a login nor a defined alias
	RuleAliasesPlace  = "OW8"  // an OWNERS_ALIASES file below the root; ignored
	RuleEmpty         = "OW9"  // an OWNERS file that grants nothing
	RuleNestedAlias   = "OW10" // an alias listing another alias, which is not expanded
	RuleReferenceList = "OW11" // a catalog.yaml reference list that cannot be judged per entry
)

// Rules is the rule catalogue, for reporters that publish one (SARIF).
var Rules = []checks.Rule{
	{ID: RuleSyntax, Name: "owners-syntax", Description: "OWNERS, OWNERS_ALIASES or a package ci.yaml is not a single valid YAML document"},
	{ID: RuleStructure, Name: "owners-structure", Description: "OWNERS, OWNERS_ALIASES or a package ci.yaml holds a value of the wrong kind, such as a string where a list belongs"},
	{ID: RuleMixedForms, Name: "owners-mixed-forms", Description: "OWNERS mixes top-level owners keys with filters"},
	{ID: RuleFilterRegex, Name: "owners-filter-regex", Description: "OWNERS filter is not a valid regular expression"},
	{ID: RuleDuplicateKey, Name: "owners-duplicate-key", Description: "OWNERS, OWNERS_ALIASES or a package ci.yaml gives a key twice"},
	{ID: RuleUnknownKey, Name: "owners-unknown-key", Description: "OWNERS or OWNERS_ALIASES has a key the format does not define, or a package ci.yaml a likely misspelling of reviewers; it is ignored"},
	{ID: RuleLogin, Name: "owners-login", Description: "an OWNERS entry is neither a GitHub login nor an alias defined in OWNERS_ALIASES, or a ci.yaml reviewer is no person's login"},
	{ID: RuleAliasesPlace, Name: "owners-aliases-place", Description: "OWNERS_ALIASES is read only at the repository root"},
	{ID: RuleEmpty, Name: "owners-empty", Description: "OWNERS file or package ci.yaml reviewers list grants nothing"},
	{ID: RuleNestedAlias, Name: "owners-nested-alias", Description: "an alias lists another alias, which is not expanded"},
	{ID: RuleReferenceList, Name: "owners-reference-list", Description: "catalog.yaml reference list cannot be judged entry by entry"},
}

func finding(rule string, sev checks.Severity, file string, line int, msg string) checks.Finding {
	return checks.Finding{Rule: rule, Severity: sev, File: file, Line: line, Message: msg}
}

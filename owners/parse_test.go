package owners_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/owners"
)

// brief renders findings as "RULE severity line: message" for comparison.
func brief(fs []checks.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %d: %s", f.Rule, f.Severity, f.Line, f.Message))
	}
	return out
}

func TestParseOwners(t *testing.T) {
	tests := []struct {
		name string
		in   string
		// entries renders the parsed entries, "" for an unusable file.
		entries string
		options owners.Options
		// findings are prefixes of the brief findings, in order.
		findings []string
	}{
		{
			name:    "simple form",
			in:      "approvers: [Alice, '@Bob', alice]\nreviewers: [carol]\nrequired_reviewers: [dan]\nlabels: [Area/X]\n",
			entries: `[line 1: approvers [alice bob] reviewers [carol] required [dan] labels [Area/X]]`,
		},
		{
			name:    "full form",
			in:      "options: {no_parent_owners: yes}\nfilters:\n  '.*': {approvers: [a]}\n  '\\.md$': {reviewers: [b]}\n",
			entries: `[line 3 filter ".*": approvers [a]] [line 4 filter "\\.md$": reviewers [b]]`,
			options: owners.Options{NoParentOwners: true},
		},
		{
			name:     "empty file",
			in:       "# nothing\n",
			entries:  ``,
			findings: []string{"OW9 warning 0: OWNERS file is empty"},
		},
		{
			name:     "null document",
			in:       "---\n",
			entries:  ``,
			findings: []string{"OW9 warning 0"},
		},
		{
			name:     "options only",
			in:       "options:\n  no_parent_owners: true\n",
			entries:  ``,
			options:  owners.Options{NoParentOwners: true},
			findings: nil,
		},
		{
			name:     "empty lists grant nothing",
			in:       "approvers: []\n",
			entries:  `[line 1:]`,
			findings: []string{"OW9 warning 1: OWNERS file names no approvers"},
		},
		{
			name:     "YAML anchors are followed",
			in:       "filters:\n  a: &x {approvers: [alice]}\n  b: *x\n",
			entries:  `[line 2 filter "a": approvers [alice]] [line 3 filter "b": approvers [alice]]`,
			findings: nil,
		},
		{
			name:     "merge keys are refused",
			in:       "base: &b {approvers: [alice]}\n<<: *b\n",
			findings: []string{"OW2 error 2: an OWNERS file uses a YAML merge key"},
		},
		{
			name:     "a login spelt as a quoted boolean is a login",
			in:       "approvers: ['no', \"on\"]\n",
			entries:  `[line 1: approvers [no on]]`,
			findings: nil,
		},
		{
			name:     "unquoted YAML 1.1 booleans are not logins",
			in:       "approvers:\n  - y\n  - off\n",
			findings: []string{"OW2 error 2: approvers: \"y\" is read as a boolean", "OW2 error 3: approvers: \"off\" is read as a boolean"},
		},
		{
			name:     "a number is not a login",
			in:       "approvers: [0x1F]\n",
			findings: []string{"OW2 error 1: approvers: \"0x1F\" is read as a number"},
		},
		{
			name:     "a nested list is not a login",
			in:       "approvers: [[alice]]\n",
			findings: []string{"OW2 error 1: approvers: every entry must be a string, got a list"},
		},
		{
			name:     "an explicit tag other than str",
			in:       "approvers: [!!binary YWxpY2U=]\n",
			findings: []string{"OW2 error 1: approvers: every entry must be a string, got a value tagged !!binary"},
		},
		{
			name:     "an empty login",
			in:       "approvers: ['@']\n",
			findings: []string{"OW2 error 1: approvers: empty login"},
		},
		{
			name:     "a mapping for a list",
			in:       "approvers: {alice: true}\n",
			findings: []string{"OW2 error 1: approvers must be a list, got a mapping"},
		},
		{
			name:     "options must be a mapping",
			in:       "options: [no_parent_owners]\napprovers: [a]\n",
			findings: []string{"OW2 error 1: options must be a mapping, got a list"},
		},
		{
			name:     "a filter must be a mapping",
			in:       "filters:\n  '.*': [alice]\n",
			findings: []string{"OW2 error 2: filter \".*\" must be a mapping, got a list"},
		},
		{
			name:     "duplicate filter",
			in:       "filters:\n  a: {approvers: [x]}\n  a: {approvers: [y]}\n",
			findings: []string{"OW5 error 3: filters gives key \"a\" twice (first on line 2)"},
		},
		{
			name:     "duplicate key in other case",
			in:       "approvers: [x]\nAPPROVERS: [y]\n",
			findings: []string{"OW5 error 2: an OWNERS file gives key \"APPROVERS\" twice"},
		},
		{
			name:     "a key that is not a string",
			in:       "? [a]\n: b\napprovers: [x]\n",
			findings: []string{"OW2 error 1: an OWNERS file has a key that is a list"},
		},
		{
			name:     "invalid YAML",
			in:       "approvers: [alice\n",
			findings: []string{"OW1 error"},
		},
		{
			name:     "tabs",
			in:       "approvers:\n\t- alice\n",
			findings: []string{"OW1 error"},
		},
		{
			name:     "scalar document",
			in:       "alice\n",
			findings: []string{"OW2 error 1: an OWNERS file must be a mapping, got a string"},
		},
		{
			name:     "mixed forms, emeritus at the top",
			in:       "emeritus_approvers: [old]\nfilters:\n  '.*': {approvers: [a]}\n",
			findings: []string{"OW3 error 2: filters cannot be combined with top-level owners keys (line 1)"},
		},
		{
			name:     "filter with an unknown key",
			in:       "filters:\n  '.*':\n    approver: [a]\n    reviewers: [b]\n",
			entries:  `[line 2 filter ".*": reviewers [b]]`,
			findings: []string{"OW6 warning 3: unknown key \"approver\" in filter \".*\" is ignored; did you mean \"approvers\"?"},
		},
		{
			name:     "unknown option",
			in:       "approvers: [a]\noptions:\n  auto_approve: true\n",
			entries:  `[line 1: approvers [a]]`,
			findings: []string{"OW6 warning 3: unknown key \"auto_approve\" in options is ignored"},
		},
		{
			name:     "several errors are all reported",
			in:       "approvers: alice\nreviewers: bob\nfilters:\n  '(': {}\n",
			findings: []string{"OW2 error 1", "OW2 error 2", "OW3 error 3"},
		},
		{
			name:     "too large",
			in:       "approvers: [a]\n" + strings.Repeat("# padding\n", 110000),
			findings: []string{"OW1 error 0: file is"},
		},
		{
			name:     "aliases that repeat too much",
			in:       aliasBomb(),
			findings: []string{"OW6 warning 1: unknown key \"big\"", "OW1 error 1: more than 65536 values"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, findings := owners.ParseOwners("OWNERS", []byte(tt.in))
			got := brief(findings)
			if len(got) != len(tt.findings) {
				t.Fatalf("findings:\n%s\nwant %d starting:\n%s", strings.Join(got, "\n"), len(tt.findings), strings.Join(tt.findings, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.findings[i]) {
					t.Errorf("finding %d = %q, want prefix %q", i, got[i], tt.findings[i])
				}
				if findings[i].File != "OWNERS" {
					t.Errorf("finding %d file = %q", i, findings[i].File)
				}
			}
			hasError := false
			for _, fd := range findings {
				hasError = hasError || fd.Severity == checks.SeverityError
			}
			if hasError != (f == nil) {
				t.Fatalf("file = %v with errors = %v; a file must be nil exactly when there are errors", f, hasError)
			}
			if f == nil {
				return
			}
			if got := renderEntries(f.Entries); got != tt.entries {
				t.Errorf("entries = %s\nwant      %s", got, tt.entries)
			}
			if f.Options != tt.options {
				t.Errorf("options = %+v, want %+v", f.Options, tt.options)
			}
		})
	}
}

// aliasBomb is a few kilobytes that name a large mapping from many filters,
// so that reading it naively visits far more values than the file holds.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("big: &big {approvers: [")
	for i := range 300 {
		fmt.Fprintf(&b, "u%d, ", i)
	}
	b.WriteString("last]}\nfilters:\n")
	for i := range 300 {
		fmt.Fprintf(&b, "  f%d: *big\n", i)
	}
	return b.String()
}

func renderEntries(entries []owners.Entry) string {
	var parts []string
	for _, e := range entries {
		s := fmt.Sprintf("[line %d", e.Line)
		if e.Filter != "" {
			s += fmt.Sprintf(" filter %q", e.Filter)
		}
		s += ":"
		for _, kv := range []struct {
			k string
			v []string
		}{{"approvers", e.Approvers}, {"reviewers", e.Reviewers}, {"required", e.RequiredReviewers}, {"labels", e.Labels}, {"emeritus", e.EmeritusApprovers}} {
			if len(kv.v) > 0 {
				s += fmt.Sprintf(" %s %v", kv.k, kv.v)
			}
		}
		parts = append(parts, s+"]")
	}
	return strings.Join(parts, " ")
}

func TestEntryMatches(t *testing.T) {
	f, findings := owners.ParseOwners("OWNERS", []byte("filters:\n  '.*': {approvers: [a]}\n  'ci\\.yaml': {approvers: [b]}\n  '^docs/': {approvers: [c]}\n"))
	if f == nil {
		t.Fatal(findings)
	}
	tests := []struct {
		rel  string
		want []bool
	}{
		{"ci.yaml", []bool{true, true, false}},
		{"old-ci.yaml.bak", []bool{true, true, false}},
		{"docs/ci.yaml", []bool{true, true, true}},
		{"sub/docs/x", []bool{true, false, false}},
	}
	for _, tt := range tests {
		var got []bool
		for i := range f.Entries {
			got = append(got, f.Entries[i].Matches(tt.rel))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: matches %v, want %v", tt.rel, got, tt.want)
		}
	}
}

func TestParseAliases(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     owners.Aliases
		findings []string
	}{
		{
			name: "block and flow",
			in:   "aliases:\n  Team-A: [Alice, '@bob']\n  team-b:\n    - carol\n  empty: null\n",
			want: owners.Aliases{"team-a": {"alice", "bob"}, "team-b": {"carol"}, "empty": nil},
		},
		{
			name: "empty file",
			in:   "",
			want: owners.Aliases{},
		},
		{
			name: "no aliases",
			in:   "aliases:\n",
			want: owners.Aliases{},
		},
		{
			name:     "a string value is an error, not a partial set",
			in:       "aliases:\n  a: [x]\n  b: bob\n",
			findings: []string{"OW2 error 3: alias \"b\" must be a list, got the string \"bob\"; write [bob]"},
		},
		{
			name:     "names differing in case only",
			in:       "aliases:\n  Team: [x]\n  team: [y]\n",
			findings: []string{"OW5 error 3: alias \"team\" is defined twice (first on line 2)"},
		},
		{
			name:     "aliases must be a mapping",
			in:       "aliases: [a, b]\n",
			findings: []string{"OW2 error 1: aliases must be a mapping, got a list"},
		},
		{
			name:     "unknown top-level key",
			in:       "alias:\n  a: [x]\n",
			want:     owners.Aliases{},
			findings: []string{"OW6 warning 1: unknown key \"alias\" in OWNERS_ALIASES is ignored; did you mean \"aliases\"?"},
		},
		{
			name:     "a nested alias is not expanded, and its name is not a login",
			in:       "aliases:\n  a: [b, x]\n  b: [yy]\n",
			want:     owners.Aliases{"a": {"x"}, "b": {"yy"}},
			findings: []string{"OW10 warning 2: alias \"a\" lists \"b\", which is itself an alias"},
		},
		{
			name:     "invalid YAML gives no aliases",
			in:       "aliases:\n  a: [x\n",
			findings: []string{"OW1 error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, findings := owners.ParseAliases("OWNERS_ALIASES", []byte(tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("aliases = %#v, want %#v", got, tt.want)
			}
			b := brief(findings)
			if len(b) != len(tt.findings) {
				t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(b, "\n"), strings.Join(tt.findings, "\n"))
			}
			for i := range b {
				if !strings.HasPrefix(b[i], tt.findings[i]) {
					t.Errorf("finding %d = %q, want prefix %q", i, b[i], tt.findings[i])
				}
			}
		})
	}
}

func TestNormLoginAndIsBot(t *testing.T) {
	for in, want := range map[string]string{"Alice": "alice", "@BOB": "bob", "@@x": "@x", "": ""} {
		if got := owners.NormLogin(in); got != want {
			t.Errorf("NormLogin(%q) = %q, want %q", in, got, want)
		}
	}
	bots := []string{"CatalogBot"}
	for login, want := range map[string]bool{
		"dependabot[bot]":     true,
		"Renovate[BOT]":       true,
		"catalogbot":          true,
		"@catalogbot":         true,
		"catalogbot[bot]":     true,
		"catalogbot-fan":      false,
		"alice":               false,
		"bot":                 false,
		"not-a-bot[bot]-user": false,
	} {
		if got := owners.IsBot(login, bots); got != want {
			t.Errorf("IsBot(%q) = %v, want %v", login, got, want)
		}
	}
}

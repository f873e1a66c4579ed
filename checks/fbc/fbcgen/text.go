package fbcgen

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"
)

// Vocabulary for names and prose. Kept in the style of Kubernetes operator
// catalogs: CRD field names, descriptions and README-like markdown.
var (
	nounWords = strings.Fields(`
		cache cluster gateway registry broker mesh vault ledger queue stream
		backup storage database index search proxy router tunnel monitor metrics
		tracer logger scheduler runner pipeline builder scanner policy secret
		certificate identity tenant workspace notebook model serving inference
		volume snapshot replica shard bucket topic channel event webhook
		function job batch workflow agent collector exporter dashboard alert
		firewall network ingress endpoint service mirror sync cron cleaner
		compactor archiver keeper guard sentinel beacon relay bridge portal`)
	adjWords = strings.Fields(`
		cloud edge fast smart open secure simple global local hybrid native
		elastic dynamic quantum rapid steady bright silent blue green red
		amber silver golden crystal arctic solar lunar stellar cosmic nimble
		agile robust modular unified managed distributed`)
	fieldWords = strings.Fields(`
		replicas image pull policy storage class size tls secret ref name
		namespace port host path timeout interval retention period limit
		request resource affinity toleration selector label annotation
		config map volume mount mode owner user group service account node
		priority enabled disabled strategy rollout max surge unavailable
		backup schedule suspend history success failure threshold delay
		probe liveness readiness startup initial seconds endpoint url token
		credential provider region bucket prefix format level output target
		source version channel update approval cert issuer domain route
		ingress gateway protocol cipher algorithm key rotation audit log
		metrics exporter scrape dashboard alert rule capacity quota weight
		cpu memory disk network bandwidth cache ttl shard partition topic`)
	proseWords = strings.Fields(`
		the operator manages lifecycle of a an instance cluster resource and
		for to with when it is be can will should must may this that in on by
		configuration deployment controller reconciles desired state status
		field value default specified if not set then used by which defines
		object reference namespace secret used allows users to configure
		application workload pods containers scheduling upgrade automatic
		seamless installation backup restore monitoring scaling observability
		security compliance performance availability high persistent storage
		network traffic endpoints certificates rotation policy rules access
		control authentication authorization integration provides supports
		optional required deprecated recommended values between minimum
		maximum number seconds bytes percentage entries items list each
		every all any only more less than greater equal format string`)
	maintainerNames = strings.Fields(`
		Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj
		Olivia Peggy Rupert Sybil Trent Victor Walter Zoe`)
	categories = []string{
		"AI/Machine Learning", "Application Runtime", "Big Data", "Cloud Provider",
		"Database", "Developer Tools", "Integration & Delivery", "Logging & Tracing",
		"Monitoring", "Networking", "OpenShift Optional", "Security", "Storage",
		"Streaming & Messaging",
	}
	capabilities = []string{"Basic Install", "Seamless Upgrades", "Full Lifecycle", "Deep Insights", "Auto Pilot"}
	maturities   = []string{"alpha", "beta", "stable"}
	xDescriptors = []string{
		"urn:alm:descriptor:com.tectonic.ui:text",
		"urn:alm:descriptor:com.tectonic.ui:number",
		"urn:alm:descriptor:com.tectonic.ui:booleanSwitch",
		"urn:alm:descriptor:com.tectonic.ui:podCount",
		"urn:alm:descriptor:com.tectonic.ui:resourceRequirements",
		"urn:alm:descriptor:io.kubernetes:Secret",
		"urn:alm:descriptor:io.kubernetes.conditions",
		"urn:alm:descriptor:com.tectonic.ui:advanced",
		"urn:alm:descriptor:com.tectonic.ui:fieldGroup:Storage",
		"urn:alm:descriptor:com.tectonic.ui:select:Always",
	}
	// Spice makes descriptions exercise escaping: quotes, HTML-ish
	// characters (JSON-escaped as \u003c), backslashes and non-ASCII text.
	spice = []string{
		`"quoted"`, "`code`", "<namespace>/<name>", "a & b", `C:\path`,
		"e.g.", "i.e.", "(optional)", "naïve", "café", "— see docs", "→",
		"50%", "#hash", "key: value", "[list]", "{braces}", "'single'",
	}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// sentence writes one sentence of n words to b.
func sentence(r *rand.Rand, b *strings.Builder, n int) {
	for i := 0; i < n; i++ {
		w := pick(r, proseWords)
		if i == 0 {
			w = capitalize(w)
		} else {
			b.WriteByte(' ')
			if r.IntN(40) == 0 {
				w = pick(r, spice)
			}
		}
		b.WriteString(w)
	}
	b.WriteByte('.')
}

// prose returns sentences totalling about n bytes.
func prose(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		sentence(r, &b, 6+r.IntN(14))
	}
	return b.String()
}

// kubeDescription is a CRD field description in kubebuilder style: wrapped
// comment lines joined by "\n", sometimes with a "More info" link.
func kubeDescription(r *rand.Rand, field string, n int) string {
	var b strings.Builder
	b.WriteString(capitalize(field))
	b.WriteString(" ")
	for b.Len() < n {
		sentence(r, &b, 5+r.IntN(12))
		if b.Len() < n {
			if r.IntN(3) == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
	}
	if r.IntN(5) == 0 {
		b.WriteString("\nMore info: https://kubernetes.io/docs/concepts/")
		b.WriteString(pick(r, fieldWords))
		b.WriteString("#")
		b.WriteString(pick(r, fieldWords))
	}
	return b.String()
}

// camel joins 1-3 field words into a camelCase identifier.
func camel(r *rand.Rand) string {
	n := 1 + r.IntN(3)
	var b strings.Builder
	for i := 0; i < n; i++ {
		w := pick(r, fieldWords)
		if i > 0 {
			w = capitalize(w)
		}
		b.WriteString(w)
	}
	return b.String()
}

// title turns "fooBarBaz" into "Foo Bar Baz".
func title(s string) string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 && c >= 'A' && c <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return capitalize(b.String())
}

func digest(r *rand.Rand) string {
	var buf [32]byte
	for i := 0; i < 32; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			buf[i+j] = byte(v >> (8 * j))
		}
	}
	return "sha256:" + hex.EncodeToString(buf[:])
}

// markdown returns a README-like operator description of about n bytes.
func markdown(r *rand.Rand, displayName string, kinds []string, n int) string {
	var b strings.Builder
	b.WriteString("## About this Operator\n\n")
	b.WriteString(displayName)
	b.WriteString(" ")
	b.WriteString(prose(r, 200))
	b.WriteString("\n\n### Features\n\n")
	for i := 0; i < 3+r.IntN(4); i++ {
		b.WriteString("* **")
		b.WriteString(title(camel(r)))
		b.WriteString("**: ")
		b.WriteString(prose(r, 60+r.IntN(80)))
		b.WriteString("\n")
	}
	if len(kinds) > 0 {
		b.WriteString("\n### Custom Resources\n\n")
	}
	for _, k := range kinds {
		b.WriteString("- `")
		b.WriteString(k)
		b.WriteString("`: ")
		b.WriteString(prose(r, 40+r.IntN(60)))
		b.WriteString("\n")
	}
	if len(kinds) > 0 {
		b.WriteString("\n### Example\n\n```yaml\napiVersion: example.com/v1\nkind: ")
		b.WriteString(kinds[0])
		b.WriteString("\nmetadata:\n  name: sample\nspec:\n  replicas: 3\n  version: \"1.0\"\n  enabled: yes\n```\n")
	}
	for b.Len() < n {
		b.WriteString("\n### ")
		b.WriteString(title(camel(r)))
		b.WriteString("\n\n")
		b.WriteString(prose(r, 300+r.IntN(500)))
		b.WriteString("\nSee [the documentation](https://docs.example.com/")
		b.WriteString(pick(r, fieldWords))
		b.WriteString(") for details.\n")
	}
	b.WriteString("\n## Support\n\nReport issues at https://github.com/example/issues.\n")
	return b.String()
}

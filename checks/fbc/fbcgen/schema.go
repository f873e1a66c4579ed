package fbcgen

import (
	"encoding/json"
	"math/rand/v2"
)

// obj is a JSON object; encoding/json writes its keys sorted, which is what
// the CRD and CSV manifests inside real olm.bundle.object properties look
// like (they were converted from YAML through a map).
type obj = map[string]any

// field is one named property of an object schema.
type field struct {
	name   string
	schema obj
	size   int // len(json.Marshal(schema)) + key overhead
}

func jsonLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // generated values are always marshalable
	}
	return len(b)
}

// schemaGen writes openAPIV3Schema fragments in the style controller-gen
// produces for Kubernetes operators.
type schemaGen struct {
	r *rand.Rand
}

func (g *schemaGen) desc(name string) string {
	return kubeDescription(g.r, name, 40+g.r.IntN(220))
}

func (g *schemaGen) str(name string) obj {
	o := obj{"description": g.desc(name), "type": "string"}
	switch g.r.IntN(8) {
	case 0:
		o["enum"] = []any{"Always", "IfNotPresent", "Never"}
	case 1:
		o["pattern"] = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	case 2:
		o["format"] = "date-time"
	case 3:
		o["default"] = pick(g.r, fieldWords)
	case 4:
		o["maxLength"] = 63
		o["minLength"] = 1
	}
	return o
}

func (g *schemaGen) integer(name string) obj {
	o := obj{"description": g.desc(name), "type": "integer"}
	if g.r.IntN(2) == 0 {
		o["format"] = "int32"
		o["minimum"] = 0
		o["maximum"] = 65535
	} else {
		o["format"] = "int64"
	}
	if g.r.IntN(3) == 0 {
		o["default"] = g.r.IntN(100)
	}
	return o
}

func (g *schemaGen) quantity() obj {
	return obj{
		"anyOf":                      []any{obj{"type": "integer"}, obj{"type": "string"}},
		"pattern":                    `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`,
		"x-kubernetes-int-or-string": true,
	}
}

func (g *schemaGen) leaf(name string) obj {
	switch g.r.IntN(10) {
	case 0, 1, 2, 3:
		return g.str(name)
	case 4, 5:
		return g.integer(name)
	case 6:
		o := obj{"description": g.desc(name), "type": "boolean"}
		if g.r.IntN(2) == 0 {
			o["default"] = g.r.IntN(2) == 0
		}
		return o
	case 7:
		return obj{"additionalProperties": obj{"type": "string"}, "description": g.desc(name), "type": "object"}
	case 8:
		return obj{"description": g.desc(name), "items": obj{"type": "string"}, "type": "array"}
	default:
		o := g.quantity()
		o["description"] = g.desc(name)
		if g.r.IntN(4) == 0 {
			o["default"] = 0.5
		}
		return o
	}
}

func (g *schemaGen) object(name string, fields ...field) obj {
	props := obj{}
	for _, f := range fields {
		props[f.name] = f.schema
	}
	return obj{"description": g.desc(name), "properties": props, "type": "object"}
}

func (g *schemaGen) f(name string, s obj) field { return field{name: name, schema: s} }

func (g *schemaGen) array(name string, item obj) obj {
	return obj{"description": g.desc(name), "items": item, "type": "array"}
}

// Canned Kubernetes types: real CRDs embed these verbatim and they are what
// makes CRDs hundreds of kilobytes.

func (g *schemaGen) labelSelector(name string) obj {
	expr := g.object("matchExpressions item",
		g.f("key", g.str("key")),
		g.f("operator", g.str("operator")),
		g.f("values", obj{"description": g.desc("values"), "items": obj{"type": "string"}, "type": "array", "x-kubernetes-list-type": "atomic"}))
	expr["required"] = []any{"key", "operator"}
	o := g.object(name,
		g.f("matchExpressions", obj{"description": g.desc("matchExpressions"), "items": expr, "type": "array", "x-kubernetes-list-type": "atomic"}),
		g.f("matchLabels", obj{"additionalProperties": obj{"type": "string"}, "description": g.desc("matchLabels"), "type": "object"}))
	o["x-kubernetes-map-type"] = "atomic"
	return o
}

func (g *schemaGen) nodeSelectorTerm() obj {
	req := func(n string) obj {
		o := g.object(n, g.f("key", g.str("key")), g.f("operator", g.str("operator")),
			g.f("values", obj{"description": g.desc("values"), "items": obj{"type": "string"}, "type": "array", "x-kubernetes-list-type": "atomic"}))
		o["required"] = []any{"key", "operator"}
		return o
	}
	o := g.object("nodeSelectorTerm",
		g.f("matchExpressions", g.array("matchExpressions", req("requirement"))),
		g.f("matchFields", g.array("matchFields", req("requirement"))))
	o["x-kubernetes-map-type"] = "atomic"
	return o
}

func (g *schemaGen) podAffinityTerm() obj {
	o := g.object("podAffinityTerm",
		g.f("labelSelector", g.labelSelector("labelSelector")),
		g.f("matchLabelKeys", obj{"description": g.desc("matchLabelKeys"), "items": obj{"type": "string"}, "type": "array", "x-kubernetes-list-type": "atomic"}),
		g.f("namespaceSelector", g.labelSelector("namespaceSelector")),
		g.f("namespaces", obj{"description": g.desc("namespaces"), "items": obj{"type": "string"}, "type": "array"}),
		g.f("topologyKey", g.str("topologyKey")))
	o["required"] = []any{"topologyKey"}
	return o
}

func (g *schemaGen) affinity() obj {
	weighted := func(n string, term obj, termName string) obj {
		w := g.object(n, g.f(termName, term), g.f("weight", g.integer("weight")))
		w["required"] = []any{"weight", termName}
		return g.array(n, w)
	}
	pod := func(n string) obj {
		return g.object(n,
			g.f("preferredDuringSchedulingIgnoredDuringExecution", weighted("preferred", g.podAffinityTerm(), "podAffinityTerm")),
			g.f("requiredDuringSchedulingIgnoredDuringExecution", g.array("required", g.podAffinityTerm())))
	}
	return g.object("affinity",
		g.f("nodeAffinity", g.object("nodeAffinity",
			g.f("preferredDuringSchedulingIgnoredDuringExecution", weighted("preferred", g.nodeSelectorTerm(), "preference")),
			g.f("requiredDuringSchedulingIgnoredDuringExecution", g.object("required",
				g.f("nodeSelectorTerms", g.array("nodeSelectorTerms", g.nodeSelectorTerm())))))),
		g.f("podAffinity", pod("podAffinity")),
		g.f("podAntiAffinity", pod("podAntiAffinity")))
}

func (g *schemaGen) resources() obj {
	claim := g.object("claim", g.f("name", g.str("name")), g.f("request", g.str("request")))
	claim["required"] = []any{"name"}
	claims := g.array("claims", claim)
	claims["x-kubernetes-list-map-keys"] = []any{"name"}
	claims["x-kubernetes-list-type"] = "map"
	q := func(n string) obj {
		return obj{"additionalProperties": g.quantity(), "description": g.desc(n), "type": "object"}
	}
	return g.object("resources", g.f("claims", claims), g.f("limits", q("limits")), g.f("requests", q("requests")))
}

func (g *schemaGen) tolerations() obj {
	t := g.object("toleration",
		g.f("effect", g.str("effect")), g.f("key", g.str("key")), g.f("operator", g.str("operator")),
		g.f("tolerationSeconds", obj{"description": g.desc("tolerationSeconds"), "format": "int64", "type": "integer"}),
		g.f("value", g.str("value")))
	return g.array("tolerations", t)
}

func (g *schemaGen) keyRef(n string) obj {
	o := g.object(n, g.f("key", g.str("key")), g.f("name", g.str("name")),
		g.f("optional", obj{"description": g.desc("optional"), "type": "boolean"}))
	o["required"] = []any{"key"}
	o["x-kubernetes-map-type"] = "atomic"
	return o
}

func (g *schemaGen) env() obj {
	e := g.object("envVar",
		g.f("name", g.str("name")),
		g.f("value", g.str("value")),
		g.f("valueFrom", g.object("valueFrom",
			g.f("configMapKeyRef", g.keyRef("configMapKeyRef")),
			g.f("fieldRef", g.object("fieldRef", g.f("apiVersion", g.str("apiVersion")), g.f("fieldPath", g.str("fieldPath")))),
			g.f("secretKeyRef", g.keyRef("secretKeyRef")))))
	e["required"] = []any{"name"}
	return g.array("env", e)
}

func (g *schemaGen) securityContext() obj {
	return g.object("securityContext",
		g.f("allowPrivilegeEscalation", obj{"description": g.desc("allowPrivilegeEscalation"), "type": "boolean"}),
		g.f("capabilities", g.object("capabilities",
			g.f("add", obj{"description": g.desc("add"), "items": obj{"type": "string"}, "type": "array", "x-kubernetes-list-type": "atomic"}),
			g.f("drop", obj{"description": g.desc("drop"), "items": obj{"type": "string"}, "type": "array", "x-kubernetes-list-type": "atomic"}))),
		g.f("privileged", obj{"description": g.desc("privileged"), "type": "boolean"}),
		g.f("readOnlyRootFilesystem", obj{"description": g.desc("readOnlyRootFilesystem"), "type": "boolean"}),
		g.f("runAsGroup", obj{"description": g.desc("runAsGroup"), "format": "int64", "type": "integer"}),
		g.f("runAsNonRoot", obj{"description": g.desc("runAsNonRoot"), "type": "boolean"}),
		g.f("runAsUser", obj{"description": g.desc("runAsUser"), "format": "int64", "type": "integer"}),
		g.f("seccompProfile", g.object("seccompProfile", g.f("localhostProfile", g.str("localhostProfile")), g.f("type", g.str("type")))))
}

func (g *schemaGen) probe() obj {
	port := g.quantity()
	delete(port, "pattern")
	port["description"] = g.desc("port")
	return g.object("probe",
		g.f("exec", g.object("exec", g.f("command", obj{"description": g.desc("command"), "items": obj{"type": "string"}, "type": "array"}))),
		g.f("failureThreshold", g.integer("failureThreshold")),
		g.f("httpGet", g.object("httpGet", g.f("host", g.str("host")), g.f("path", g.str("path")), g.f("port", port), g.f("scheme", g.str("scheme")))),
		g.f("initialDelaySeconds", g.integer("initialDelaySeconds")),
		g.f("periodSeconds", g.integer("periodSeconds")),
		g.f("tcpSocket", g.object("tcpSocket", g.f("host", g.str("host")), g.f("port", port))),
		g.f("timeoutSeconds", g.integer("timeoutSeconds")))
}

// custom builds an operator-specific nested object of about budget bytes.
func (g *schemaGen) custom(name string, depth, budget int) obj {
	props := obj{}
	size := 300
	for size < budget {
		fname := camel(g.r)
		if _, dup := props[fname]; dup {
			continue
		}
		var s obj
		if depth < 3 && g.r.IntN(4) == 0 {
			s = g.custom(fname, depth+1, budget/3)
		} else {
			s = g.leaf(fname)
		}
		props[fname] = s
		size += jsonLen(s) + len(fname) + 4
	}
	o := obj{"description": g.desc(name), "properties": props, "type": "object"}
	if g.r.IntN(3) == 0 {
		return g.array(name, o)
	}
	return o
}

// specFields returns the top-level fields of a CRD spec totalling about
// budget bytes of JSON, in the order they are added over releases.
func (g *schemaGen) specFields(budget int) []field {
	var out []field
	seen := map[string]bool{}
	total := 0
	add := func(name string, s obj) {
		if seen[name] {
			return
		}
		sz := jsonLen(s) + len(name) + 4
		if total+sz > budget+budget/20+400 {
			// Too big for what is left: take a small field instead, so
			// the schema ends close to its budget.
			name = camel(g.r)
			if seen[name] {
				return
			}
			s = g.leaf(name)
			sz = jsonLen(s) + len(name) + 4
		}
		seen[name] = true
		out = append(out, field{name: name, schema: s, size: sz})
		total += sz
	}
	add("replicas", g.integer("replicas"))
	add("image", g.str("image"))
	for total < budget {
		switch n := g.r.IntN(20); {
		case n == 0 && budget-total > 20000:
			add("affinity", g.affinity())
		case n == 1:
			add("resources", g.resources())
		case n == 2:
			add("tolerations", g.tolerations())
		case n == 3:
			add("env", g.env())
		case n == 4:
			add("securityContext", g.securityContext())
		case n == 5:
			add(pick(g.r, []string{"livenessProbe", "readinessProbe", "startupProbe"}), g.probe())
		case n == 6:
			add("selector", g.labelSelector("selector"))
		case n < 12:
			name := camel(g.r)
			add(name, g.custom(name, 1, min(budget-total, 1000+g.r.IntN(6000))))
		default:
			name := camel(g.r)
			add(name, g.leaf(name))
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// prefix returns the leading fields that hold about frac of the bytes of
// all of them (at least one): older releases of a CRD had fewer fields.
func prefix(fields []field, frac float64) []field {
	total := 0
	for _, f := range fields {
		total += f.size
	}
	limit := int(frac * float64(total))
	n, sum := 1, fields[0].size
	for n < len(fields) && abs(sum+fields[n].size-limit) <= abs(sum-limit) {
		sum += fields[n].size
		n++
	}
	return fields[:n]
}

func (g *schemaGen) conditions() obj {
	c := obj{
		"description": g.desc("condition"),
		"properties": obj{
			"lastTransitionTime": obj{"description": g.desc("lastTransitionTime"), "format": "date-time", "type": "string"},
			"message":            obj{"description": g.desc("message"), "maxLength": 32768, "type": "string"},
			"observedGeneration": obj{"description": g.desc("observedGeneration"), "format": "int64", "minimum": 0, "type": "integer"},
			"reason":             obj{"description": g.desc("reason"), "maxLength": 1024, "minLength": 1, "pattern": `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`, "type": "string"},
			"status":             obj{"description": g.desc("status"), "enum": []any{"True", "False", "Unknown"}, "type": "string"},
			"type":               obj{"description": g.desc("type"), "maxLength": 316, "pattern": `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`, "type": "string"},
		},
		"required": []any{"lastTransitionTime", "message", "reason", "status", "type"},
		"type":     "object",
	}
	a := g.array("conditions", c)
	a["x-kubernetes-list-map-keys"] = []any{"type"}
	a["x-kubernetes-list-type"] = "map"
	return a
}

func (g *schemaGen) status(kind string) obj {
	return obj{
		"description": kind + "Status defines the observed state of " + kind,
		"properties": obj{
			"conditions":         g.conditions(),
			"observedGeneration": obj{"description": g.desc("observedGeneration"), "format": "int64", "type": "integer"},
			"phase":              g.str("phase"),
		},
		"type": "object",
	}
}

// openAPIV3Schema assembles the root schema from the first n spec fields.
func openAPIV3Schema(kind, plural string, spec []field, status obj) obj {
	props := obj{}
	for _, f := range spec {
		props[f.name] = f.schema
	}
	return obj{
		"description": kind + " is the Schema for the " + plural + " API",
		"properties": obj{
			"apiVersion": obj{"description": "APIVersion defines the versioned schema of this representation of an object.\nServers should convert recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources", "type": "string"},
			"kind":       obj{"description": "Kind is a string value representing the REST resource this object represents.\nServers may infer this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds", "type": "string"},
			"metadata":   obj{"type": "object"},
			"spec": obj{
				"description": kind + "Spec defines the desired state of " + kind,
				"properties":  props,
				"type":        "object",
			},
			"status": status,
		},
		"type": "object",
	}
}

// mustJSON is json.Marshal for generated values, which always marshal. Like
// the manifests in real catalogs it escapes <, > and & as \u003c etc.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

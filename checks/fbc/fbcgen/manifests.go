package fbcgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// pkgGen holds what is shared by the bundles of one package.
type pkgGen struct {
	p        *pkgPlan
	r        *rand.Rand
	iconData []byte
	iconType string
	// per CRD: spec fields in release order, status schema, descriptor paths
	spec     [][]field
	status   []obj
	specPath [][]string
	examples []obj
	keywords []string
	links    []any
	maint    []any
	cats     string
	capab    string
	maturity string
	builder  string
}

// kube-rbac-proxy is shared by many operators; one digest for the catalog.
const rbacProxyImage = "gcr.io/kubebuilder/kube-rbac-proxy@sha256:d4883d7c622683b3319b5e6b3a7edfbf2594c18060131a8bf64504805f875522"

func newPkgGen(p *pkgPlan, seed uint64) *pkgGen {
	r := newRand(seed, uint64(p.idx)<<1)
	g := &pkgGen{p: p, r: r}
	if p.iconPNG {
		g.iconData, g.iconType = pngIcon(r, p.iconSize), "image/png"
	} else {
		g.iconData, g.iconType = svgIcon(r), "image/svg+xml"
	}
	sg := &schemaGen{r: r}
	for _, c := range p.crds {
		var fields []field
		var status obj
		if p.payload == payloadBundleObject {
			status = sg.status(c.kind)
			fields = sg.specFields(max(500, c.schemaBytes-jsonLen(status)-1000))
		} else {
			// csv metadata carries no schema, only descriptor paths.
			seen := map[string]bool{}
			for len(fields) < c.nFields {
				if n := camel(r); !seen[n] {
					seen[n] = true
					fields = append(fields, field{name: n})
				}
			}
		}
		g.spec = append(g.spec, fields)
		g.status = append(g.status, status)
		var paths []string
		for _, i := range r.Perm(len(fields))[:min(len(fields), c.nDesc)] {
			paths = append(paths, fields[i].name)
		}
		g.specPath = append(g.specPath, paths)
		ex := obj{
			"apiVersion": c.group + "/" + c.versions[len(c.versions)-1],
			"kind":       c.kind,
			"metadata":   obj{"name": c.singular + "-sample", "labels": obj{"app.kubernetes.io/name": p.name, "app.kubernetes.io/managed-by": "kustomize"}},
		}
		spec := obj{}
		for i := 0; i < min(len(fields), 1+r.IntN(5)); i++ {
			switch r.IntN(4) {
			case 0:
				spec[fields[i].name] = r.IntN(10)
			case 1:
				spec[fields[i].name] = r.IntN(2) == 0
			case 2:
				spec[fields[i].name] = obj{camel(r): pick(r, fieldWords)}
			default:
				spec[fields[i].name] = pick(r, fieldWords) + "-" + pick(r, nounWords)
			}
		}
		ex["spec"] = spec
		g.examples = append(g.examples, ex)
	}
	for i := 0; i < 3+r.IntN(6); i++ {
		g.keywords = append(g.keywords, pick(r, nounWords))
	}
	g.links = []any{
		obj{"name": p.displayName, "url": "https://github.com/example/" + p.name},
		obj{"name": "Documentation", "url": "https://docs.example.com/" + p.name},
	}
	for i := 0; i < 1+r.IntN(3); i++ {
		n := pick(r, maintainerNames)
		g.maint = append(g.maint, obj{"email": strings.ToLower(n) + "@example.com", "name": n})
	}
	g.cats = pick(r, categories)
	if r.IntN(3) == 0 {
		g.cats += ", " + pick(r, categories)
	}
	g.capab = pick(r, capabilities)
	g.maturity = pick(r, maturities)
	g.builder = fmt.Sprintf("operator-sdk-v1.%d.%d", 20+r.IntN(20), r.IntN(3))
	return g
}

// bundle is what one bundle needs beyond the plan.
type bundle struct {
	i        int
	name     string
	version  string
	image    string
	opImage  string
	related  []relatedImage
	crds     []int // indexes of CRDs owned by this bundle
	frac     float64
	replaces string
	created  string
}

func (g *pkgGen) newBundle(i int) *bundle {
	p, r := g.p, g.r
	b := &bundle{i: i, name: p.bundleName(i), version: p.versions[i]}
	b.image = "quay.io/example/" + p.name + "-bundle@" + digest(r)
	b.opImage = "quay.io/example/" + p.name + "@" + digest(r)
	b.related = []relatedImage{{Name: "", Image: b.image}, {Name: pick(r, []string{"", "manager"}), Image: b.opImage}, {Name: pick(r, []string{"", "kube-rbac-proxy"}), Image: rbacProxyImage}}
	for k := 0; k < p.operands; k++ {
		op := pick(r, nounWords)
		img := "registry.example.com/" + p.name + "/" + op + "@" + digest(r)
		if r.IntN(4) == 0 {
			img = "docker.io/example/" + op + ":v" + b.version
		}
		b.related = append(b.related, relatedImage{Name: op, Image: img})
	}
	sortRelated(b.related)
	for k, c := range p.crds {
		if c.intro <= i {
			b.crds = append(b.crds, k)
		}
	}
	b.frac = 1
	if p.nBundles > 1 {
		b.frac = 0.75 + 0.25*float64(i)/float64(p.nBundles-1)
	}
	if i > 0 {
		b.replaces = p.bundleName(i - 1)
	}
	b.created = fmt.Sprintf("20%02d-%02d-%02dT%02d:%02d:%02dZ", 20+i/12%6, 1+i%12, 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60))
	return b
}

func sortRelated(ri []relatedImage) {
	for i := 1; i < len(ri); i++ {
		for j := i; j > 0 && ri[j].Image < ri[j-1].Image; j-- {
			ri[j], ri[j-1] = ri[j-1], ri[j]
		}
	}
}

func (g *pkgGen) annotations(b *bundle, desc string) obj {
	var ex []any
	for _, k := range b.crds {
		ex = append(ex, g.examples[k])
	}
	alm, _ := json.MarshalIndent(ex, "", "  ")
	a := obj{
		"alm-examples":                           string(alm),
		"capabilities":                           g.capab,
		"categories":                             g.cats,
		"containerImage":                         b.opImage,
		"createdAt":                              b.created,
		"description":                            desc,
		"operators.operatorframework.io/builder": g.builder,
		"operators.operatorframework.io/project_layout": "go.kubebuilder.io/v4",
		"repository": "https://github.com/example/" + g.p.name,
		"support":    g.p.provider,
		"features.operators.openshift.io/disconnected":   "true",
		"features.operators.openshift.io/fips-compliant": "false",
		"features.operators.openshift.io/proxy-aware":    "false",
		"features.operators.openshift.io/tls-profiles":   "false",
		"operatorframework.io/suggested-namespace":       g.p.name,
	}
	if g.p.idx%4 == 0 {
		a["olm.skipRange"] = ">=" + g.p.versions[0] + " <" + b.version
	}
	return a
}

func (g *pkgGen) crdDescriptions(b *bundle) obj {
	r := g.r
	var owned []any
	for _, k := range b.crds {
		c := g.p.crds[k]
		for _, v := range c.versions {
			var sd []any
			for _, path := range g.specPath[k] {
				d := obj{"description": kubeDescription(r, path, 20+r.IntN(100)), "displayName": title(path), "path": path}
				if r.IntN(2) == 0 {
					d["x-descriptors"] = []any{pick(r, xDescriptors)}
				}
				sd = append(sd, d)
			}
			owned = append(owned, obj{
				"description":     c.kind + " is the Schema for the " + c.plural + " API",
				"displayName":     title(c.kind),
				"kind":            c.kind,
				"name":            c.plural + "." + c.group,
				"resources":       []any{obj{"kind": "Deployment", "name": "", "version": "v1"}, obj{"kind": "Service", "name": "", "version": "v1"}},
				"specDescriptors": sd,
				"statusDescriptors": []any{
					obj{"description": "Conditions of the resource.", "displayName": "Conditions", "path": "conditions", "x-descriptors": []any{"urn:alm:descriptor:io.kubernetes.conditions"}},
					obj{"description": kubeDescription(r, "phase", 60), "displayName": "Phase", "path": "phase"},
				},
				"version": v,
			})
		}
	}
	out := obj{"owned": owned}
	if len(g.p.reqGVK) > 0 {
		var req []any
		for _, x := range g.p.reqGVK {
			req = append(req, obj{"description": "Required by " + g.p.displayName, "displayName": title(x.kind), "kind": x.kind, "name": strings.ToLower(x.kind) + "s." + x.group, "version": x.version})
		}
		out["required"] = req
	}
	return out
}

var installModes = []any{
	obj{"supported": true, "type": "OwnNamespace"},
	obj{"supported": true, "type": "SingleNamespace"},
	obj{"supported": false, "type": "MultiNamespace"},
	obj{"supported": true, "type": "AllNamespaces"},
}

// csvMetadata is the olm.csv.metadata property value.
func (g *pkgGen) csvMetadata(b *bundle) obj {
	r, p := g.r, g.p
	m := obj{
		"annotations":           g.annotations(b, prose(r, 60+r.IntN(100))),
		"apiServiceDefinitions": obj{},
		"crdDescriptions":       g.crdDescriptions(b),
		"displayName":           p.displayName,
		"installModes":          installModes,
		"keywords":              g.keywordsAny(),
		"labels":                obj{"operatorframework.io/arch.amd64": "supported", "operatorframework.io/arch.arm64": "supported", "operatorframework.io/os.linux": "supported"},
		"links":                 g.links,
		"maintainers":           g.maint,
		"maturity":              g.maturity,
		"minKubeVersion":        "1.25.0",
		"provider":              obj{"name": p.provider, "url": "https://example.com/" + p.name},
	}
	m["description"] = markdown(r, p.displayName, g.kinds(b), p.descBytes)
	return m
}

func (g *pkgGen) keywordsAny() []any {
	out := make([]any, len(g.keywords))
	for i, k := range g.keywords {
		out[i] = k
	}
	return out
}

func (g *pkgGen) kinds(b *bundle) []string {
	var k []string
	for _, i := range b.crds {
		k = append(k, g.p.crds[i].kind)
	}
	return k
}

func (g *pkgGen) rules() []any {
	var rules []any
	for _, c := range g.p.crds {
		rules = append(rules,
			obj{"apiGroups": []any{c.group}, "resources": []any{c.plural}, "verbs": []any{"create", "delete", "get", "list", "patch", "update", "watch"}},
			obj{"apiGroups": []any{c.group}, "resources": []any{c.plural + "/finalizers"}, "verbs": []any{"update"}},
			obj{"apiGroups": []any{c.group}, "resources": []any{c.plural + "/status"}, "verbs": []any{"get", "patch", "update"}})
	}
	rules = append(rules,
		obj{"apiGroups": []any{""}, "resources": []any{"configmaps", "secrets", "services", "pods"}, "verbs": []any{"create", "delete", "get", "list", "patch", "update", "watch"}},
		obj{"apiGroups": []any{"apps"}, "resources": []any{"deployments", "statefulsets"}, "verbs": []any{"create", "delete", "get", "list", "patch", "update", "watch"}},
		obj{"apiGroups": []any{"authentication.k8s.io"}, "resources": []any{"tokenreviews"}, "verbs": []any{"create"}})
	return rules
}

func (g *pkgGen) deployment(b *bundle) obj {
	p := g.p
	sa := p.name + "-controller-manager"
	labels := obj{"app.kubernetes.io/name": p.name, "control-plane": "controller-manager"}
	var env []any
	for _, ri := range b.related {
		if ri.Name != "" && ri.Name != "manager" && ri.Name != "kube-rbac-proxy" {
			env = append(env, obj{"name": "RELATED_IMAGE_" + strings.ToUpper(ri.Name), "value": ri.Image})
		}
	}
	env = append(env, obj{"name": "WATCH_NAMESPACE", "valueFrom": obj{"fieldRef": obj{"fieldPath": "metadata.annotations['olm.targetNamespaces']"}}})
	probe := func(path string) obj {
		return obj{"httpGet": obj{"path": path, "port": 8081}, "initialDelaySeconds": 15, "periodSeconds": 20}
	}
	return obj{
		"label": labels,
		"name":  sa,
		"spec": obj{
			"replicas": 1,
			"selector": obj{"matchLabels": labels},
			"strategy": obj{},
			"template": obj{
				"metadata": obj{"annotations": obj{"kubectl.kubernetes.io/default-container": "manager"}, "labels": labels},
				"spec": obj{
					"containers": []any{
						obj{
							"args":            []any{"--health-probe-bind-address=:8081", "--metrics-bind-address=127.0.0.1:8080", "--leader-elect"},
							"command":         []any{"/manager"},
							"env":             env,
							"image":           b.opImage,
							"livenessProbe":   probe("/healthz"),
							"name":            "manager",
							"readinessProbe":  probe("/readyz"),
							"resources":       obj{"limits": obj{"cpu": "500m", "memory": "512Mi"}, "requests": obj{"cpu": "10m", "memory": "64Mi"}},
							"securityContext": obj{"allowPrivilegeEscalation": false, "capabilities": obj{"drop": []any{"ALL"}}},
						},
						obj{
							"args":  []any{"--secure-listen-address=0.0.0.0:8443", "--upstream=http://127.0.0.1:8080/", "--logtostderr=true", "--v=0"},
							"image": rbacProxyImage,
							"name":  "kube-rbac-proxy",
							"ports": []any{obj{"containerPort": 8443, "name": "https", "protocol": "TCP"}},
							"resources": obj{"limits": obj{"cpu": "500m", "memory": "128Mi"},
								"requests": obj{"cpu": "5m", "memory": "64Mi"}},
						},
					},
					"securityContext":               obj{"runAsNonRoot": true},
					"serviceAccountName":            sa,
					"terminationGracePeriodSeconds": 10,
				},
			},
		},
	}
}

// csv is the full ClusterServiceVersion manifest of a bundle-object bundle.
func (g *pkgGen) csv(b *bundle) obj {
	r, p := g.r, g.p
	sa := p.name + "-controller-manager"
	var related []any
	for _, ri := range b.related {
		if ri.Image != b.image {
			related = append(related, obj{"image": ri.Image, "name": ri.Name})
		}
	}
	spec := obj{
		"apiservicedefinitions":     obj{},
		"customresourcedefinitions": g.crdDescriptions(b),
		"displayName":               p.displayName,
		"icon":                      []any{obj{"base64data": g.iconData, "mediatype": g.iconType}},
		"install": obj{
			"spec": obj{
				"clusterPermissions": []any{obj{"rules": g.rules(), "serviceAccountName": sa}},
				"deployments":        []any{g.deployment(b)},
				"permissions": []any{obj{"rules": []any{
					obj{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list", "watch", "create", "update", "patch", "delete"}},
					obj{"apiGroups": []any{"coordination.k8s.io"}, "resources": []any{"leases"}, "verbs": []any{"get", "list", "watch", "create", "update", "patch", "delete"}},
					obj{"apiGroups": []any{""}, "resources": []any{"events"}, "verbs": []any{"create", "patch"}},
				}, "serviceAccountName": sa}},
			},
			"strategy": "deployment",
		},
		"installModes":   installModes,
		"keywords":       g.keywordsAny(),
		"links":          g.links,
		"maintainers":    g.maint,
		"maturity":       g.maturity,
		"minKubeVersion": "1.25.0",
		"provider":       obj{"name": p.provider, "url": "https://example.com/" + p.name},
		"relatedImages":  related,
		"version":        b.version,
	}
	if b.replaces != "" {
		spec["replaces"] = b.replaces
	}
	csv := obj{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "ClusterServiceVersion",
		"metadata": obj{
			"annotations": g.annotations(b, prose(r, 60+r.IntN(100))),
			"name":        b.name,
			"namespace":   "placeholder",
		},
		"spec": spec,
	}
	spec["description"] = markdown(r, p.displayName, g.kinds(b), p.descBytes)
	return csv
}

func (g *pkgGen) crd(b *bundle, k int) obj {
	c := g.p.crds[k]
	schema := openAPIV3Schema(c.kind, c.plural, prefix(g.spec[k], b.frac), g.status[k])
	var versions []any
	for vi, v := range c.versions {
		versions = append(versions, obj{
			"additionalPrinterColumns": []any{
				obj{"jsonPath": ".status.phase", "name": "Phase", "type": "string"},
				obj{"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
			},
			"name":         v,
			"schema":       obj{"openAPIV3Schema": schema},
			"served":       true,
			"storage":      vi == len(c.versions)-1,
			"subresources": obj{"status": obj{}},
		})
	}
	names := obj{"kind": c.kind, "listKind": c.kind + "List", "plural": c.plural, "singular": c.singular}
	if c.shortName != "" {
		names["shortNames"] = []any{c.shortName}
	}
	return obj{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": obj{
			"annotations":       obj{"controller-gen.kubebuilder.io/version": "v0.16.1"},
			"creationTimestamp": nil,
			"name":              c.plural + "." + c.group,
		},
		"spec":   obj{"group": c.group, "names": names, "scope": "Namespaced", "versions": versions},
		"status": obj{"acceptedNames": obj{"kind": "", "plural": ""}, "conditions": nil, "storedVersions": nil},
	}
}

func (g *pkgGen) other(kind string) obj {
	p := g.p
	meta := obj{"creationTimestamp": nil, "labels": obj{"app.kubernetes.io/name": p.name}, "name": p.name + "-" + strings.ToLower(kind)}
	switch kind {
	case "ClusterRole":
		meta["name"] = p.name + "-metrics-reader"
		return obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta, "rules": []any{obj{"nonResourceURLs": []any{"/metrics"}, "verbs": []any{"get"}}}}
	case "Service":
		meta["name"] = p.name + "-controller-manager-metrics-service"
		return obj{"apiVersion": "v1", "kind": kind, "metadata": meta, "spec": obj{"ports": []any{obj{"name": "https", "port": 8443, "protocol": "TCP", "targetPort": "https"}}, "selector": obj{"control-plane": "controller-manager"}}, "status": obj{"loadBalancer": obj{}}}
	case "ConfigMap":
		meta["name"] = p.name + "-manager-config"
		return obj{"apiVersion": "v1", "kind": kind, "metadata": meta, "data": obj{"controller_manager_config.yaml": "apiVersion: controller-runtime.sigs.k8s.io/v1alpha1\nkind: ControllerManagerConfig\nhealth:\n  healthProbeBindAddress: :8081\nmetrics:\n  bindAddress: 127.0.0.1:8080\nwebhook:\n  port: 9443\nleaderElection:\n  leaderElect: true\n  resourceName: " + p.name + ".example.com\n"}}
	case "ServiceAccount":
		return obj{"apiVersion": "v1", "kind": kind, "metadata": meta}
	case "RoleBinding", "ClusterRoleBinding":
		return obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
			"roleRef":  obj{"apiGroup": "rbac.authorization.k8s.io", "kind": strings.TrimSuffix(kind, "Binding"), "name": p.name + "-role"},
			"subjects": []any{obj{"kind": "ServiceAccount", "name": p.name + "-controller-manager", "namespace": "system"}}}
	}
	panic("unknown kind " + kind)
}

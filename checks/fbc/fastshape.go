package fbc

// shape describes a JSON type for a quick check that a parsed tree decodes
// into it without error. A tree that does not match is not necessarily
// wrong: the caller then asks encoding/json, which has the last word.
type shape struct {
	kind   byte // 's' string, 'b' bool, 'M' string map, 'o' object, 'l' list, 'a' anything
	fields map[string]*shape
	elem   *shape
}

var (
	anyShape    = &shape{kind: 'a'}
	strShape    = &shape{kind: 's'}
	strMapShape = &shape{kind: 'M'}
	strList     = &shape{kind: 'l', elem: strShape}
)

func object(fields map[string]*shape) *shape { return &shape{kind: 'o', fields: fields} }
func listOf(elem *shape) *shape              { return &shape{kind: 'l', elem: elem} }

// csvMetadataShape is property.CSVMetadata, minus the fields with numbers
// (containerPort), which the fast parser never produces anyway.
var csvMetadataShape = func() *shape {
	descriptor := listOf(object(map[string]*shape{
		"path": strShape, "displayName": strShape, "description": strShape,
		"x-descriptors": strList, "value": anyShape,
	}))
	resources := listOf(object(map[string]*shape{"name": strShape, "kind": strShape, "version": strShape}))
	crd := object(map[string]*shape{
		"name": strShape, "version": strShape, "kind": strShape, "displayName": strShape, "description": strShape,
		"resources": resources, "statusDescriptors": descriptor, "specDescriptors": descriptor, "actionDescriptors": descriptor,
	})
	apiService := object(map[string]*shape{
		"name": strShape, "group": strShape, "version": strShape, "kind": strShape, "deploymentName": strShape,
		"displayName": strShape, "description": strShape,
		"resources": resources, "statusDescriptors": descriptor, "specDescriptors": descriptor, "actionDescriptors": descriptor,
	})
	link := object(map[string]*shape{"name": strShape, "url": strShape})
	return object(map[string]*shape{
		"annotations":           strMapShape,
		"apiServiceDefinitions": object(map[string]*shape{"owned": listOf(apiService), "required": listOf(apiService)}),
		"crdDescriptions":       object(map[string]*shape{"owned": listOf(crd), "required": listOf(crd)}),
		"description":           strShape,
		"displayName":           strShape,
		"installModes":          listOf(object(map[string]*shape{"type": strShape, "supported": {kind: 'b'}})),
		"keywords":              strList,
		"labels":                strMapShape,
		"links":                 listOf(link),
		"maintainers":           listOf(object(map[string]*shape{"name": strShape, "email": strShape})),
		"maturity":              strShape,
		"minKubeVersion":        strShape,
		"nativeAPIs":            listOf(object(map[string]*shape{"group": strShape, "version": strShape, "kind": strShape})),
		"provider":              link,
	})
}()

// fits reports whether n certainly decodes into s.
func (s *shape) fits(n *ynode) bool {
	switch s.kind {
	case 'a':
		return true
	case 's', 'b':
		return n.kind == s.kind
	case 'M':
		if n.kind != 'm' {
			return false
		}
		for _, v := range n.vals {
			if v.kind != 's' {
				return false
			}
		}
		return true
	case 'l':
		if n.kind != 'l' {
			return false
		}
		for _, it := range n.items {
			if !s.elem.fits(it) {
				return false
			}
		}
		return true
	case 'o':
		if n.kind != 'm' {
			return false
		}
		for i, k := range n.keys {
			f, ok := s.fields[k]
			if !ok || !f.fits(n.vals[i]) {
				return false
			}
		}
		return true
	}
	return false
}

package policy

import (
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/owners"
)

// Records keeps values derived from git trees across processes, each
// under a kind and the id of the tree it was derived from
// (policy/review/pkgindex's Store is one, in the package index's
// directory). LoadRecord returns only a record saved whole for exactly
// that kind and tree; anything damaged or of another tree is not found.
//
// NearestRecord returns the record of kind saved last, whatever its tree:
// one derived from an ancestor of the tree asked for, as a rule, from
// which what did not change is taken (ReadOperatorsFrom).
type Records interface {
	LoadRecord(kind, tree string) ([]byte, bool)
	SaveRecord(kind, tree string, data []byte) error
	NearestRecord(kind string) (tree string, data []byte, ok bool)
}

// operatorsKind names the operators record among Records'.
const operatorsKind = "operators"

// operatorsFormat is the version of the record's content; a record of
// another is derived again. Change it whenever what is derived from a
// ci.yaml changes (a finding's wording, a new key read).
const operatorsFormat = "catalogbot-operators 2"

// operatorsRecord is everything derived from one operators directory:
// the templates its packages' ci.yaml files map and the notes about them,
// and the files as owners.Load reads them. Shared by every check of a
// base with that tree, so never changed once made.
type operatorsRecord struct {
	Format string `json:"format"`
	// Templates and Notes are those of every package, in the order of
	// Operators.Files; Mappings holds them by package, for a record
	// derived from this one, and is what is saved.
	Templates []Template         `json:"-"`
	Notes     []checks.Finding   `json:"-"`
	Mappings  map[string]mapping `json:"mappings,omitempty"`
	Operators *owners.Operators  `json:"operators"`
	// saved says the record is in a Records already: one derived by a
	// reader that had none (the App's publish) is saved by the first
	// that has one.
	saved atomic.Bool
}

// mapping is what one package's ci.yaml maps and says about it.
type mapping struct {
	Templates []Template       `json:"templates,omitempty"`
	Notes     []checks.Finding `json:"notes,omitempty"`
}

// add records pkg's templates and notes, after those of the packages
// before it.
func (rec *operatorsRecord) add(pkg string, m mapping) {
	if len(m.Templates) == 0 && len(m.Notes) == 0 {
		return
	}
	if rec.Mappings == nil {
		rec.Mappings = map[string]mapping{}
	}
	rec.Mappings[pkg] = m
	rec.Templates = append(rec.Templates, m.Templates...)
	rec.Notes = append(rec.Notes, m.Notes...)
}

// maxOperatorsKept bounds the records kept in memory: a service checks
// pull requests of a few bases at a time, and a record of a large
// repository is a few hundred kilobytes.
const maxOperatorsKept = 16

// operatorsKept are the records derived or loaded in this process, by
// tree id, oldest first in order.
var operatorsKept = &keptRecords{m: map[string]*operatorsRecord{}}

type keptRecords struct {
	mu    sync.Mutex
	m     map[string]*operatorsRecord
	order []string
}

func (k *keptRecords) get(tree string) (*operatorsRecord, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	rec, ok := k.m[tree]
	return rec, ok
}

func (k *keptRecords) put(tree string, rec *operatorsRecord) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.m[tree]; ok {
		return
	}
	if len(k.order) >= maxOperatorsKept {
		delete(k.m, k.order[0])
		k.order = k.order[1:]
	}
	k.m[tree] = rec
	k.order = append(k.order, tree)
}

// latest is the record put last, nil for none.
func (k *keptRecords) latest() *operatorsRecord {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.order) == 0 {
		return nil
	}
	return k.m[k.order[len(k.order)-1]]
}

func (k *keptRecords) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.m)
	k.order = nil
}

// recalled is the record of the operators tree id tree, from this
// process or from records; false for none, or for a tree from which
// nothing is kept ("", see owners.OperatorsTree).
func recalled(tree string, records Records) (*operatorsRecord, bool) {
	if tree == "" {
		return nil, false
	}
	if rec, ok := operatorsKept.get(tree); ok {
		if records != nil && rec.saved.CompareAndSwap(false, true) {
			save(rec, records)
		}
		return rec, true
	}
	if records == nil {
		return nil, false
	}
	data, ok := records.LoadRecord(operatorsKind, tree)
	if !ok {
		return nil, false
	}
	rec, err := decodeOperators(data, tree)
	if err != nil {
		return nil, false
	}
	rec.saved.Store(true)
	operatorsKept.put(tree, rec)
	return rec, true
}

// keep remembers rec, read just now, in this process and in records.
func keep(rec *operatorsRecord, records Records) {
	if rec.Operators.Tree == "" {
		return
	}
	if records != nil {
		rec.saved.Store(true)
		save(rec, records)
	}
	operatorsKept.put(rec.Operators.Tree, rec)
}

// save writes rec to records. A record that cannot be saved costs the
// next process the read this one made, never a wrong answer.
func save(rec *operatorsRecord, records Records) {
	if data, err := json.Marshal(rec); err == nil {
		_ = records.SaveRecord(operatorsKind, rec.Operators.Tree, data)
	}
}

// errOperatorsRecord says a saved record is not one this version wrote
// for the tree asked for.
var errOperatorsRecord = errors.New("not an operators record of this version and tree")

// decodeOperators reads a saved record, which must say it was derived
// from tree.
func decodeOperators(data []byte, tree string) (*operatorsRecord, error) {
	var rec operatorsRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, err
	}
	if rec.Format != operatorsFormat || rec.Operators == nil || rec.Operators.Tree != tree {
		return nil, errOperatorsRecord
	}
	// The lists in the files' order, as they were derived.
	mappings := rec.Mappings
	rec.Mappings = nil
	for _, f := range rec.Operators.Files {
		if m, ok := mappings[f.Package]; ok {
			rec.add(f.Package, m)
			delete(mappings, f.Package)
		}
	}
	if len(mappings) > 0 {
		return nil, errOperatorsRecord
	}
	return &rec, nil
}

// nearest is the record derived last, in this process or saved in
// records: an ancestor's, as a rule, from which a new operators tree takes
// the files of the package directories that did not change. nil for none.
func nearest(records Records) *operatorsRecord {
	if rec := operatorsKept.latest(); rec != nil {
		return rec
	}
	if records == nil {
		return nil
	}
	tree, data, ok := records.NearestRecord(operatorsKind)
	if !ok {
		return nil
	}
	rec, err := decodeOperators(data, tree)
	if err != nil {
		return nil
	}
	return rec
}

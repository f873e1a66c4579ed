// Package opmref is the reference oracle for the differential tests: it runs
// the same three phases as `opm validate` using operator-registry v1.65.0
// (declcfg.LoadFS, declcfg.ConvertToModel, model.Validate) and reports the
// exit code and error message opm would print.
//
// Files are decoded one at a time (declcfg.WithConcurrency(1)), so blobs are
// seen in lexical file order and the first bad file in lexical order is the
// one reported. opm itself decodes with runtime.NumCPU() goroutines, which
// makes its choice among several bad files nondeterministic.
package opmref

import (
	"context"
	"io/fs"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// Phase says which stage of `opm validate` produced the verdict.
type Phase int

const (
	// PhaseOK means the catalog passed all three phases.
	PhaseOK Phase = iota
	// PhaseLoad is a fail-fast error from declcfg.LoadFS.
	PhaseLoad
	// PhaseConvert is a fail-fast error from declcfg.ConvertToModel.
	PhaseConvert
	// PhaseModel is an aggregated error tree ("invalid index: ...") from
	// model validation.
	PhaseModel
)

func (p Phase) String() string {
	switch p {
	case PhaseOK:
		return "ok"
	case PhaseLoad:
		return "load"
	case PhaseConvert:
		return "convert"
	case PhaseModel:
		return "model"
	}
	return "unknown"
}

// Outcome is the full result of one oracle run.
type Outcome struct {
	RC      int
	Message string
	Phase   Phase
	// Config is the loaded catalog; nil when loading failed.
	Config *declcfg.DeclarativeConfig
}

// Validate returns opm's exit code (0 valid, 1 invalid) and its error message
// ("" when valid) for the catalog rooted at fsys.
func Validate(fsys fs.FS) (rc int, message string) {
	o := Run(fsys, 1)
	return o.RC, o.Message
}

// Run validates fsys decoding files with the given number of goroutines
// (0 keeps operator-registry's default, runtime.NumCPU(), as opm does).
func Run(fsys fs.FS, concurrency int) Outcome {
	var opts []declcfg.LoadOption
	if concurrency > 0 {
		opts = append(opts, declcfg.WithConcurrency(concurrency))
	}
	cfg, err := declcfg.LoadFS(context.Background(), fsys, opts...)
	if err != nil {
		return Outcome{RC: 1, Message: err.Error(), Phase: PhaseLoad}
	}
	m, err := declcfg.ConvertToModel(*cfg)
	if err != nil {
		// v1.65.0's ConvertToModel already runs model validation and
		// returns its error tree; classify by the tree's root.
		p := PhaseConvert
		if strings.HasPrefix(err.Error(), "invalid index") {
			p = PhaseModel
		}
		return Outcome{RC: 1, Message: err.Error(), Phase: p, Config: cfg}
	}
	if err := m.Validate(); err != nil {
		return Outcome{RC: 1, Message: err.Error(), Phase: PhaseModel, Config: cfg}
	}
	return Outcome{Config: cfg}
}

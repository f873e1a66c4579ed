// Package pipeline wires the checks of a change together: what they read
// (Input) and the checks themselves, each a checks.Check over *Input. It
// sits above checks, owners and policy, which all report checks.Findings
// and so cannot be imported by checks itself.
package pipeline

import (
	"context"
	"io/fs"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
)

// Input is everything the checks of one change read. Base and Head are the
// trees of the change's base and head commits; Policy must come from Base,
// never from Head, or a change could relax the rules it is judged by.
type Input struct {
	Change    *change.Change
	Base      fs.FS
	Head      fs.FS
	Policy    *policy.Policy
	Approvals []owners.Approval
}

// Checks returns the checks a change goes through.
func Checks() []checks.Check[*Input] {
	return []checks.Check[*Input]{Owners{}, FBC{}}
}

// Run runs every check of Checks on in.
func Run(ctx context.Context, in *Input) checks.Report {
	return checks.Run(ctx, in, Checks()...)
}

package checks

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// Run runs every check on in at once and returns their results sorted by
// check name, so that the report reads the same whatever finished first.
//
// The checks share ctx; Run does not cancel the others when one fails,
// because the point of a report is to say everything that is wrong at once.
// A check that panics is reported as a failure of that check alone rather
// than taking the process (a webhook server handling many changes) down.
// A result is always named after its check, whatever the check filled in.
//
// When ctx ends, Run stops waiting: a check still running is reported as
// cut short (neutral: it could not judge), with the context's cause, so
// that a deadline bounds the report even for a check stuck where it does
// not look at ctx. Such a check finishes in the background and its result
// is dropped.
func Run[T any](ctx context.Context, in T, checks ...Check[T]) Report {
	results := make([]Result, len(checks))
	done := make([]chan Result, len(checks))
	for i, c := range checks {
		done[i] = make(chan Result, 1)
		go func() { done[i] <- runOne(ctx, c, in) }()
	}
	for i, c := range checks {
		// A result that is there already is taken first, so that a check
		// that finished before ctx ended keeps it.
		select {
		case results[i] = <-done[i]:
			continue
		default:
		}
		select {
		case results[i] = <-done[i]:
		case <-ctx.Done():
			results[i] = Result{Name: c.Name(), Conclusion: Neutral, Findings: []Finding{},
				Summary: fmt.Sprintf("Cut short before it could judge: %v.", context.Cause(ctx))}
		}
	}
	slices.SortStableFunc(results, func(a, b Result) int { return cmp.Compare(a.Name, b.Name) })
	return Report{Results: results}
}

func runOne[T any](ctx context.Context, c Check[T], in T) (res Result) {
	name := c.Name()
	defer func() {
		if p := recover(); p != nil {
			res = Result{Conclusion: Failure, Summary: fmt.Sprintf("The check crashed: %v", p)}
		}
		res.Name = name
		if res.Conclusion == "" {
			res.Conclusion = Neutral
		}
		if res.Findings == nil {
			res.Findings = []Finding{}
		}
	}()
	if err := ctx.Err(); err != nil {
		return Result{Conclusion: Neutral, Summary: fmt.Sprintf("Not run: %v.", err)}
	}
	return c.Run(ctx, in)
}

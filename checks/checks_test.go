package checks

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// fakeCheck is a check whose behaviour the table decides.
type fakeCheck struct {
	name string
	run  func(ctx context.Context, in int) Result
}

func (f fakeCheck) Name() string                           { return f.name }
func (f fakeCheck) Run(ctx context.Context, in int) Result { return f.run(ctx, in) }

func TestRunOrderAndNormalisation(t *testing.T) {
	tests := []struct {
		name   string
		checks []Check[int]
		want   []Result
	}{
		{"none", nil, []Result{}},
		{
			"sorted by name, name forced",
			[]Check[int]{
				fakeCheck{"owners", func(context.Context, int) Result { return Result{Name: "wrong", Conclusion: Success} }},
				fakeCheck{"fbc", func(_ context.Context, in int) Result {
					return Result{Conclusion: Failure, Findings: []Finding{{Rule: "r", Severity: SeverityError, Message: "m"}}}
				}},
			},
			[]Result{
				{Name: "fbc", Conclusion: Failure, Findings: []Finding{{Rule: "r", Severity: SeverityError, Message: "m"}}},
				{Name: "owners", Conclusion: Success, Findings: []Finding{}},
			},
		},
		{
			"panic and empty conclusion",
			[]Check[int]{
				fakeCheck{"b", func(context.Context, int) Result { panic("boom") }},
				fakeCheck{"a", func(context.Context, int) Result { return Result{} }},
			},
			[]Result{
				{Name: "a", Conclusion: Neutral, Findings: []Finding{}},
				{Name: "b", Conclusion: Failure, Findings: []Finding{}, Summary: "The check crashed: boom"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Run(context.Background(), 0, tt.checks...).Results
			if len(got) != len(tt.want) {
				t.Fatalf("got %d results, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Name != w.Name || g.Conclusion != w.Conclusion || g.Summary != w.Summary || len(g.Findings) != len(w.Findings) || g.Findings == nil {
					t.Errorf("result %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestRunConcurrent proves the checks run at once: each waits until all
// have started, which would deadlock (and time out) if they ran in turn.
func TestRunConcurrent(t *testing.T) {
	const n = 8
	var started atomic.Int32
	all := make(chan struct{})
	var checks []Check[int]
	for i := range n {
		checks = append(checks, fakeCheck{string(rune('a' + n - 1 - i)), func(ctx context.Context, in int) Result {
			if started.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
				return Result{Conclusion: Success, Summary: "saw input"}
			case <-time.After(5 * time.Second):
				return Result{Conclusion: Failure, Summary: "ran alone"}
			}
		}})
	}
	rep := Run(context.Background(), 42, checks...)
	for i, res := range rep.Results {
		if want := string(rune('a' + i)); res.Name != want || res.Conclusion != Success {
			t.Errorf("result %d = %s %s, want %s success", i, res.Name, res.Conclusion, want)
		}
	}
	if !rep.Passed() {
		t.Error("Passed() = false, want true")
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	rep := Run(ctx, 0, Check[int](fakeCheck{"x", func(context.Context, int) Result { ran = true; return Result{Conclusion: Success} }}))
	if ran || rep.Results[0].Conclusion != Pending {
		t.Errorf("ran = %v, result = %+v; want not run, pending", ran, rep.Results[0])
	}
}

// TestRunCutShort: a check that its deadline stopped has not judged, so it
// is pending whatever it returned, unless it found a failure; a check
// that finished before the deadline keeps its conclusion.
func TestRunCutShort(t *testing.T) {
	waitOut := func(c Conclusion) func(ctx context.Context, _ int) Result {
		return func(ctx context.Context, _ int) Result {
			<-ctx.Done()
			return Result{Conclusion: c, Summary: "Checked what there was time for.\n"}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	rep := Run(ctx, 0,
		Check[int](fakeCheck{"a-success", waitOut(Success)}),
		Check[int](fakeCheck{"b-neutral", waitOut(Neutral)}),
		Check[int](fakeCheck{"c-failure", waitOut(Failure)}),
	)
	want := []Conclusion{Pending, Pending, Failure}
	for i, res := range rep.Results {
		if res.Conclusion != want[i] {
			t.Errorf("%s = %s, want %s", res.Name, res.Conclusion, want[i])
		}
		if want[i] != Pending {
			continue
		}
		if len(res.Waits) != 1 || res.Waits[0] != (Wait{Class: WaitDeadline}) {
			t.Errorf("%s waits %+v, want the deadline", res.Name, res.Waits)
		}
		if w := "Could not judge: the check ran out of time before it could judge.\n\nChecked what there was time for.\n"; res.Summary != w {
			t.Errorf("%s summary %q, want %q", res.Name, res.Summary, w)
		}
	}
	if rep.Passed() {
		t.Error("Passed() = true with pending checks")
	}
}

func TestWaits(t *testing.T) {
	var ws []Wait
	for _, w := range []Wait{
		{Registry: "z.example", Class: WaitTransport, Count: 1},
		{Registry: "a.example", Class: WaitRateLimited, Count: 2},
		{Registry: "z.example", Class: WaitTransport, Count: 3},
	} {
		ws = AddWait(ws, w)
	}
	want := "registry a.example (2 references) rate limited the requests; " +
		"registry z.example (4 references) did not answer in time or could not be reached"
	if got := WaitList(ws); got != want {
		t.Errorf("WaitList = %q, want %q", got, want)
	}
}

// TestRunStopsAtDeadline: a check stuck where it does not look at its
// context does not hold the report past the context's end; it is cut short
// as undecided, with the cause, and the checks that finished keep their
// results.
func TestRunStopsAtDeadline(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	started, finished := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		<-finished
		cancel(errors.New("the check's deadline passed"))
	}()
	rep := Run(ctx, 0,
		Check[int](fakeCheck{"stuck", func(context.Context, int) Result { close(started); <-stuck; return Result{Conclusion: Success} }}),
		// The deadline passes once the stuck check is under way.
		Check[int](fakeCheck{"quick", func(context.Context, int) Result { <-started; close(finished); return Result{Conclusion: Success} }}),
	)
	want := map[string]Result{
		"quick": {Conclusion: Success},
		"stuck": {Conclusion: Pending, Summary: "Could not judge: the check was stopped before it could judge (the check's deadline passed).\n"},
	}
	for _, res := range rep.Results {
		if w := want[res.Name]; res.Conclusion != w.Conclusion || res.Summary != w.Summary || res.Findings == nil {
			t.Errorf("%s = %+v, want %+v", res.Name, res, w)
		}
	}
}

func TestReportMarkdown(t *testing.T) {
	rep := Report{Results: []Result{
		{Name: "fbc", Conclusion: Failure, Summary: "1 error introduced.\n"},
		{Name: "owners", Conclusion: Success},
	}}
	want := "| Check | Conclusion |\n| --- | --- |\n" +
		"| fbc | ❌ failure |\n" +
		"| owners | ✅ success |\n" +
		"\n### fbc\n\n1 error introduced.\n"
	if got := rep.Markdown(); got != want {
		t.Errorf("Markdown() =\n%s\nwant\n%s", got, want)
	}
	if c := rep.Conclusions(); c["fbc"] != Failure || c["owners"] != Success || len(c) != 2 {
		t.Errorf("Conclusions() = %v", c)
	}
	if rep.Passed() {
		t.Error("Passed() = true with a failure")
	}
}

func TestConclusionOf(t *testing.T) {
	tests := []struct {
		sev  []Severity
		want Conclusion
	}{
		{nil, Success},
		{[]Severity{SeverityWarning, SeverityNote}, Success},
		{[]Severity{SeverityWarning, SeverityError}, Failure},
	}
	for _, tt := range tests {
		var fs []Finding
		for _, s := range tt.sev {
			fs = append(fs, Finding{Severity: s})
		}
		if got := ConclusionOf(fs); got != tt.want {
			t.Errorf("ConclusionOf(%v) = %s, want %s", tt.sev, got, tt.want)
		}
	}
}

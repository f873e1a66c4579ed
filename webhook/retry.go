package webhook

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"
)

// RetryClass says what a failed job's error calls for. A job's failure
// never waits for the periodic resync: whatever may pass on its own is
// tried again with backoff, and what will not is said where the pull
// request shows it.
type RetryClass int

const (
	// Transient failures pass on their own: GitHub's server errors
	// (5xx), its rate limits (Retry-After or the limit's reset
	// honoured), network errors, git that could not fetch. The job is
	// tried again with exponential backoff and jitter.
	Transient RetryClass = iota
	// Unauthorized is GitHub's 401: the installation token was revoked or
	// GitHub's clock is ahead of ours. The GitHub client drops the token
	// and mints a new one (ghapi); the job is tried again as a transient
	// failure.
	Unauthorized
	// Permanent failures do not pass by trying again: a 4xx other than
	// the above (the App lacks a permission, the pull request is gone, a
	// request GitHub refuses as invalid) or a job that cannot be done as
	// it is. The job is not tried again; the next change of the pull
	// request or the next resync runs it.
	Permanent
	// Canceled is a job stopped by its context (a drain that timed out,
	// a lost lease): not a failure of the job's own.
	Canceled
)

func (c RetryClass) String() string {
	switch c {
	case Transient:
		return "transient"
	case Unauthorized:
		return "unauthorized"
	case Permanent:
		return "permanent"
	case Canceled:
		return "canceled"
	}
	return fmt.Sprintf("RetryClass(%d)", int(c))
}

// permanentError marks an error as Permanent.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// AsPermanent marks err as Permanent whatever it wraps: trying the job
// again would fail the same way. Nil stays nil.
func AsPermanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// Classify says what err calls for, and how long GitHub asked to be left
// alone first (a rate limit's Retry-After or reset) when it said.
func Classify(err error, now time.Time) (class RetryClass, after time.Duration) {
	var (
		perm  permanentError
		rl    *github.RateLimitError
		abuse *github.AbuseRateLimitError
		er    *github.ErrorResponse
		ae    *github.AcceptedError
		mint  *ghinstallation.HTTPError
		ne    net.Error
		ue    *url.Error
	)
	switch {
	case err == nil:
		return Transient, 0
	case errors.As(err, &perm):
		return Permanent, 0
	case errors.Is(err, context.Canceled):
		return Canceled, 0
	case errors.As(err, &abuse):
		if abuse.RetryAfter != nil {
			return Transient, max(*abuse.RetryAfter, 0)
		}
		return Transient, time.Minute // GitHub: "wait at least one minute"
	case errors.As(err, &rl):
		return Transient, max(rl.Rate.Reset.Sub(now)+time.Second, 0)
	case errors.As(err, &ae):
		return Transient, 0 // GitHub is still computing the answer
	case errors.As(err, &er) && er.Response != nil:
		return classOfStatus(er.Response.StatusCode), 0
	case errors.As(err, &mint) && mint.Response != nil:
		// GitHub's answer to a token request: a suspended or removed
		// installation is not mended by asking again.
		return classOfStatus(mint.Response.StatusCode), 0
	case errors.As(err, &ue), errors.As(err, &ne):
		return Transient, 0
	}
	// Anything else (git could not fetch, a state write failed) is taken
	// to pass: the tries are bounded (RetryPolicy.MaxAttempts).
	return Transient, 0
}

// classOfStatus is the class of a GitHub answer's HTTP status.
func classOfStatus(code int) RetryClass {
	switch {
	case code == http.StatusUnauthorized:
		return Unauthorized
	case code >= 500, code == http.StatusTooManyRequests, code == http.StatusRequestTimeout:
		return Transient
	case code >= 400:
		return Permanent
	}
	return Transient
}

// Retry defaults.
const (
	DefaultRetryMin         = time.Second
	DefaultRetryMax         = 5 * time.Minute
	DefaultRetryMaxAttempts = 10
)

// RetryPolicy is how the queues try failed jobs again. Zero fields take
// the defaults above.
type RetryPolicy struct {
	// Min is the pause before the first retry, doubled for each further
	// one up to Max; half of each pause is random, so jobs that failed
	// together (GitHub down for a moment) do not come back together.
	Min, Max time.Duration
	// MaxAttempts bounds the tries of one job, the first included; after
	// the last the periodic resync is what runs it again.
	MaxAttempts int
	// rand is the random half's source (tests); nil is math/rand/v2.
	rand func(n int64) int64
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Min <= 0 {
		p.Min = DefaultRetryMin
	}
	if p.Max <= 0 {
		p.Max = DefaultRetryMax
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultRetryMaxAttempts
	}
	if p.rand == nil {
		p.rand = rand.Int64N
	}
	return p
}

// Backoff is the pause after the attempt-th failure (1 for the first):
// Min doubled per failure, capped at Max, the upper half random.
func (p RetryPolicy) Backoff(attempt int) time.Duration {
	p = p.withDefaults()
	d := p.Min << min(max(attempt-1, 0), 30)
	if d <= 0 || d > p.Max {
		d = p.Max
	}
	half := d / 2
	return half + time.Duration(p.rand(int64(half)+1))
}

// Retry is the job that tries job again after it failed with err, and
// whether there is one: not for a Permanent or Canceled failure, nor
// after the last attempt. It is held back by the backoff, or as long as
// GitHub asked when that is longer. Like a Result's retry, it carries no
// delivery id or replay key: the processor reads the current state, as
// for every job. A push's retry keeps the push's payload, the one thing
// that says what to publish (a publish of a commit that is no longer the
// tip is skipped); without it, a publish that failed once never ran.
func (p RetryPolicy) Retry(job Job, err error, now time.Time) (Job, RetryClass, bool) {
	p = p.withDefaults()
	class, after := Classify(err, now)
	attempt := job.Attempt + 1
	if class == Permanent || class == Canceled || attempt >= p.MaxAttempts {
		return Job{}, class, false
	}
	wait := max(p.Backoff(attempt), after)
	retry := Job{
		Key:          job.Key,
		Event:        "retry",
		Action:       class.String(),
		Installation: job.Installation,
		Received:     now,
		NotBefore:    now.Add(wait),
		Attempt:      attempt,
	}
	if job.Key.Kind == KindPush {
		retry.Payload = job.Payload
	}
	return retry, class, true
}

package webhook

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultMaxBody is GitHub's own cap on a webhook payload: it does not send
// larger ones, so anything larger did not come from GitHub.
const DefaultMaxBody = 25 << 20

// RetryAfter is the Retry-After, in seconds, of a 503 when the queue is full
// or draining. GitHub does not retry on its own; resync recovers the work.
const RetryAfter = 30

// maxDeliveryID bounds the X-GitHub-Delivery header (a GUID from GitHub),
// which becomes a key of the dedupe map.
const maxDeliveryID = 128

// ServerOptions configure a Server.
type ServerOptions struct {
	Secrets  [][]byte // webhook secrets; a delivery signed with any of them is accepted
	MaxBody  int64    // body cap in bytes; 0 is DefaultMaxBody
	Queue    *Queue
	Metrics  *Metrics            // nil: a fresh set on a private registry, served by /metrics
	Gatherer prometheus.Gatherer // what /metrics serves; nil: Metrics' registry as above, else prometheus.DefaultGatherer
	Logger   *slog.Logger
	Ready    func() error // /readyz consults it; nil is always ready
	// Observe, when set, sees every job a verified delivery makes, before
	// the queue may replace it with a newer job for the same key: what
	// only a delivery says (who edited a comment) is not lost to the
	// coalescing.
	Observe func(Job)
	// MaxReading bounds the bytes of the bodies being read and not yet
	// verified, all requests together; 0 is DefaultMaxReading. A body is
	// read before its signature can be checked, so without a bound anyone
	// could make the server hold MaxBody per connection. A delivery that
	// would go past it is refused with 503 and Retry-After (GitHub's
	// redelivery or the resync brings its work back).
	MaxReading int64
}

// DefaultMaxReading is ServerOptions.MaxReading's default: 10 bodies of the
// largest size GitHub sends.
const DefaultMaxReading = 10 * DefaultMaxBody

// Server is the HTTP front of the service.
type Server struct {
	secrets [][]byte
	maxBody int64
	// maxReading and reading are the budget of body bytes being read
	// before verification, and its use.
	maxReading int64
	reading    atomic.Int64
	queue      *Queue
	m          *Metrics
	log        *slog.Logger
	ready      func() error
	observe    func(Job)
	handler    http.Handler
}

// NewServer checks the options and builds the handler. It refuses to work
// without a webhook secret: an unsigned webhook endpoint would let anyone
// trigger merges.
func NewServer(o ServerOptions) (*Server, error) {
	s := &Server{maxBody: o.MaxBody, maxReading: o.MaxReading, queue: o.Queue, m: o.Metrics, log: o.Logger, ready: o.Ready, observe: o.Observe}
	for _, sec := range o.Secrets {
		if len(sec) > 0 {
			s.secrets = append(s.secrets, append([]byte(nil), sec...))
		}
	}
	if len(s.secrets) == 0 {
		return nil, errors.New("webhook server: refusing to start without a webhook secret")
	}
	if s.queue == nil {
		return nil, errors.New("webhook server: no work queue")
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	if s.maxReading <= 0 {
		s.maxReading = DefaultMaxReading
	}
	if s.maxReading < s.maxBody {
		return nil, fmt.Errorf("webhook server: MaxReading (%d bytes) is less than MaxBody (%d bytes)", s.maxReading, s.maxBody)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	gatherer := o.Gatherer
	if s.m == nil {
		reg := prometheus.NewRegistry()
		s.m = NewMetrics(reg)
		if gatherer == nil {
			gatherer = reg
		}
	}
	if gatherer == nil {
		gatherer = prometheus.DefaultGatherer
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/webhook", s.webhook)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		replyText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	s.handler = mux
	return s, nil
}

// Handler serves POST /webhook, GET /healthz, GET /readyz and GET /metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// NewHTTPServer returns an http.Server for h with timeouts suited to an
// endpoint on the internet: a slow client cannot hold a connection (and the
// body buffer it fills) for long.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second, // 25 MiB at ~3.5 Mbit/s
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.queue.Draining() {
		replyText(w, http.StatusServiceUnavailable, "draining")
		return
	}
	if s.ready != nil {
		if err := s.ready(); err != nil {
			// The reason goes to the log, not to whoever can reach the port.
			s.log.Warn("not ready", "error", err)
			replyText(w, http.StatusServiceUnavailable, "not ready")
			return
		}
	}
	replyText(w, http.StatusOK, "ready")
}

// webhook receives one delivery. The order matters: headers, then the size
// cap, then the signature over the raw bytes, and only then is the body
// parsed, so nothing unauthenticated reaches the JSON decoder.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		replyText(w, http.StatusMethodNotAllowed, "method not allowed; POST a webhook delivery")
		return
	}
	event := r.Header.Get("X-GitHub-Event")
	delivery := r.Header.Get("X-GitHub-Delivery")
	label := eventLabel(event)
	log := s.log.With("delivery", delivery, "event", event)

	switch {
	case event == "" || delivery == "":
		s.refuse(w, log, label, ResultMalformed, http.StatusBadRequest, "missing X-GitHub-Event or X-GitHub-Delivery header")
		return
	case !headerToken(event, 64) || !headerToken(delivery, maxDeliveryID):
		s.refuse(w, log, label, ResultMalformed, http.StatusBadRequest, "malformed X-GitHub-Event or X-GitHub-Delivery header")
		return
	}
	sig := r.Header.Get(SignatureHeader)
	if sig == "" {
		msg := "missing " + SignatureHeader + " header"
		if r.Header.Get("X-Hub-Signature") != "" {
			msg = "only " + SignatureHeader + " (HMAC-SHA256) is accepted"
		}
		s.refuse(w, log, label, ResultBadSignature, http.StatusUnauthorized, msg)
		return
	}
	if r.ContentLength > s.maxBody {
		s.refuse(w, log, label, ResultTooLarge, http.StatusRequestEntityTooLarge, "body too large")
		return
	}
	// Reserve the body's size (the most it may be, when not given) in the
	// budget of unverified bytes until the signature is checked.
	reserve := r.ContentLength
	if reserve < 0 {
		reserve = s.maxBody
	}
	if s.reading.Add(reserve) > s.maxReading {
		s.reading.Add(-reserve)
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
		s.refuse(w, log, label, ResultOverloaded, http.StatusServiceUnavailable, "too many deliveries being read; retry later")
		return
	}
	body, err := readBody(w, r, s.maxBody)
	verr := error(nil)
	if err == nil {
		verr = VerifySignature(s.secrets, sig, body)
	}
	s.reading.Add(-reserve)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			s.refuse(w, log, label, ResultTooLarge, http.StatusRequestEntityTooLarge, "body too large")
			return
		}
		log.Warn("reading webhook body", "error", err)
		s.refuse(w, log, label, ResultMalformed, http.StatusBadRequest, "could not read body")
		return
	}
	if err := verr; err != nil {
		log.Warn("webhook signature refused", "error", err, "remote", r.RemoteAddr)
		s.m.Deliveries.WithLabelValues(label, ResultBadSignature).Inc()
		replyText(w, http.StatusUnauthorized, "bad signature")
		return
	}

	rt, err := route(event, delivery, body, time.Now())
	if err != nil {
		log.Warn("malformed webhook payload", "error", err)
		s.m.Deliveries.WithLabelValues(label, ResultMalformed).Inc()
		replyText(w, http.StatusBadRequest, "malformed payload")
		return
	}
	if len(rt.jobs) == 0 {
		log.Debug("webhook ignored")
		s.m.Deliveries.WithLabelValues(label, ResultIgnored).Inc()
		replyText(w, http.StatusAccepted, "ignored")
		return
	}
	first := rt.jobs[0]
	log = log.With("action", first.Action, "repo", first.Key.Repo, "pr", first.Key.PR, "sha", rt.sha)
	if len(rt.jobs) > 1 {
		log = log.With("prs", len(rt.jobs))
	}

	if s.observe != nil {
		for _, j := range rt.jobs {
			s.observe(j)
		}
	}
	switch res := s.queue.EnqueueAll(rt.jobs); res {
	case Queued, Replaced:
		result := ResultAccepted
		if res == Replaced {
			result = ResultReplaced
		}
		log.Info("webhook accepted", "kind", first.Key.Kind, "result", result)
		s.m.Deliveries.WithLabelValues(label, result).Inc()
		replyText(w, http.StatusAccepted, "accepted")
	case Duplicate:
		log.Info("duplicate webhook delivery dropped")
		s.m.Deliveries.WithLabelValues(label, ResultDuplicate).Inc()
		replyText(w, http.StatusAccepted, "duplicate")
	default: // Full, Closed
		log.Warn("webhook refused: work queue "+res.String(), "queued", s.queue.Len())
		s.m.Deliveries.WithLabelValues(label, ResultOverloaded).Inc()
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
		replyText(w, http.StatusServiceUnavailable, "overloaded; retry later")
	}
}

func (s *Server) refuse(w http.ResponseWriter, log *slog.Logger, label, result string, code int, msg string) {
	log.Warn("webhook refused", "result", result, "reason", msg)
	s.m.Deliveries.WithLabelValues(label, result).Inc()
	replyText(w, code, msg)
}

// readBody reads the whole body, at most limit bytes. A body with a known
// length of up to 1 MiB (every usual payload) is read into a slice of
// exactly that size, since the slice is kept in the queue; a larger claimed
// length is not trusted for an allocation before the bytes arrive.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	defer body.Close()
	if n := r.ContentLength; n >= 0 && n <= 1<<20 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, fmt.Errorf("reading %d-byte body: %w", n, err)
		}
		return buf, nil
	}
	buf, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if cap(buf)-len(buf) > len(buf)/8 {
		buf = append([]byte(nil), buf...)
	}
	return buf, nil
}

// eventLabel bounds the event label of the deliveries metric: an
// unauthenticated client picks the header, and every distinct value would
// be a new time series.
func eventLabel(event string) string {
	if Allowed(event) || event == "ping" {
		return event
	}
	return "other"
}

// token reports whether s is a short run of printable ASCII without spaces.
func headerToken(s string, max int) bool {
	if len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func replyText(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	io.WriteString(w, msg+"\n")
}

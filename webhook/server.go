package webhook

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
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
	Secrets [][]byte // webhook secrets; a delivery signed with any of them is accepted
	MaxBody int64    // body cap in bytes; 0 is DefaultMaxBody
	// Queue takes the work: the in-memory *Queue, or a durable one
	// (package webhook/durable) that outlives the process.
	Queue    Intake
	Metrics  *Metrics            // nil: a fresh set on a private registry, served by MetricsHandler
	Gatherer prometheus.Gatherer // what MetricsHandler serves; nil: Metrics' registry as above, else prometheus.DefaultGatherer
	// MetricsToken, when set, is the bearer token MetricsHandler asks
	// for. Without it, MetricsHandler is for a listener only the
	// operator's network reaches (loopback by default).
	MetricsToken string
	Logger       *slog.Logger
	Ready        func() error // /readyz consults it; nil is always ready
	// Observe, when set, sees every job a verified delivery makes, before
	// the queue may replace it with a newer job for the same key: what
	// only a delivery says (who edited a comment) is not lost to the
	// coalescing.
	Observe func(Job)
	// MaxReading bounds the bytes of the bodies being read and not yet
	// verified, all requests together; 0 is DefaultMaxReading. A body is
	// read before its signature can be checked, so without a bound anyone
	// could make the server hold MaxBody per connection. The budget is
	// charged with the bytes as they arrive, never with the declared
	// Content-Length: a client that claims 25 MiB and sends one byte holds
	// one byte of it. A delivery whose bytes would go past it is refused
	// with 503 and Retry-After (GitHub's redelivery or the resync brings
	// its work back).
	MaxReading int64
	// MinBodyRate is the slowest a body may arrive, in bytes per second,
	// once BodyGrace has passed; 0 is DefaultMinBodyRate. A connection
	// that falls behind is answered 408 and closed, so a client that
	// trickles its body cannot hold a connection, a goroutine and its
	// share of MaxReading for long.
	MinBodyRate int64
	// BodyGrace is the time a body has before MinBodyRate applies (the
	// first bytes, a short stall); 0 is DefaultBodyGrace.
	BodyGrace time.Duration
	// RegistryHook turns on POST /hooks/registry (registryhook.go); its
	// zero value leaves it off.
	RegistryHook RegistryHookOptions
}

// Intake defaults.
const (
	// DefaultMaxReading is ServerOptions.MaxReading's default: 10 bodies
	// of the largest size GitHub sends.
	DefaultMaxReading = 10 * DefaultMaxBody
	// DefaultMinBodyRate is 64 KiB/s. GitHub gives up on a delivery
	// after 10 seconds, so its bodies arrive far faster; 64 KiB/s still
	// lets the largest body through within MaxBodyTime's minutes on a poor
	// link.
	DefaultMinBodyRate = 64 << 10
	// DefaultBodyGrace lets a body start late or stall briefly.
	DefaultBodyGrace = 5 * time.Second
	// MaxBodyTime caps reading one body, however fast it arrives.
	MaxBodyTime = 60 * time.Second
)

// preallocMax is the largest declared body for which the buffer is made
// at its declared size before the bytes arrive: every usual payload (5-30
// KiB) is read without copying, and a client that only claims a size pins
// at most this much.
const preallocMax = 64 << 10

// Server is the HTTP front of the service.
type Server struct {
	secrets [][]byte
	maxBody int64
	// maxReading and reading are the budget of body bytes being read
	// before verification, and its use; bodies counts the requests
	// reading one.
	maxReading int64
	reading    atomic.Int64
	bodies     atomic.Int64
	minRate    int64
	grace      time.Duration
	queue      Intake
	m          *Metrics
	log        *slog.Logger
	ready      func() error
	observe    func(Job)
	regHook    RegistryHookOptions
	handler    http.Handler
	metrics    http.Handler
}

// NewServer checks the options and builds the handler. It refuses to work
// without a webhook secret: an unsigned webhook endpoint would let anyone
// trigger merges.
func NewServer(o ServerOptions) (*Server, error) {
	s := &Server{maxBody: o.MaxBody, maxReading: o.MaxReading, minRate: o.MinBodyRate, grace: o.BodyGrace,
		queue: o.Queue, m: o.Metrics, log: o.Logger, ready: o.Ready, observe: o.Observe, regHook: o.RegistryHook}
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
	if s.minRate <= 0 {
		s.minRate = DefaultMinBodyRate
	}
	if s.grace <= 0 {
		s.grace = DefaultBodyGrace
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
	mux.HandleFunc("/hooks/registry", s.registryHook)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		replyText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	s.handler = mux

	// The metrics tell anyone who reads them what the service is doing
	// (which events come, how GitHub answers, how much quota is left), so
	// they are not on the public handler.
	mmux := http.NewServeMux()
	var promh http.Handler = promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{})
	if o.MetricsToken != "" {
		promh = requireBearer(o.MetricsToken, promh)
	}
	mmux.Handle("GET /metrics", promh)
	s.metrics = mmux
	return s, nil
}

// Handler is the public handler: POST /webhook, POST /hooks/registry
// (when configured), GET /healthz and GET /readyz. It serves no /metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// MetricsHandler serves GET /metrics (Prometheus), for a listener of its
// own (Config.MetricsAddr), behind ServerOptions.MetricsToken when set.
func (s *Server) MetricsHandler() http.Handler { return s.metrics }

// requireBearer lets a request through to h only with "Authorization:
// Bearer token", compared in constant time.
func requireBearer(token string, h http.Handler) http.Handler {
	want := sha256.Sum256([]byte("Bearer " + token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Comparing digests keeps the time independent of the token's
		// length as well as of its bytes.
		got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="catalogbot metrics"`)
			replyText(w, http.StatusUnauthorized, "unauthorized")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// NewHTTPServer returns an http.Server for h with timeouts suited to an
// endpoint on the internet, so that no client holds a connection for long
// without sending: headers must be complete within ReadHeaderTimeout (a
// slowloris client is dropped), the webhook handler holds each body to a
// minimum rate (ServerOptions.MinBodyRate), ReadTimeout bounds what
// another handler leaves unread, and an idle keep-alive connection is
// closed after IdleTimeout.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       MaxBodyTime + 5*time.Second,
		// The write deadline runs from the end of the headers, so it
		// covers the body's read as well as the reply.
		WriteTimeout:   MaxBodyTime + 10*time.Second,
		IdleTimeout:    30 * time.Second,
		MaxHeaderBytes: 64 << 10,
	}
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.queue.Draining() {
		replyText(w, http.StatusServiceUnavailable, "draining")
		return
	}
	if s.ready != nil {
		if err := s.ready(); err != nil {
			// The detail goes to the log, not to whoever can reach the
			// port; the body names what is wrong in a few words.
			s.log.Warn("not ready", "error", err)
			body := "not ready"
			var nr *NotReadyError
			if errors.As(err, &nr) {
				body += ": " + nr.Reason
			}
			replyText(w, http.StatusServiceUnavailable, body)
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
	body, charged, err := s.readBody(w, r)
	verr := error(nil)
	if err == nil {
		verr = verifySignature(s.secrets, sig, body)
	}
	s.reading.Add(-charged)
	if err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			s.refuse(w, log, label, ResultTooLarge, http.StatusRequestEntityTooLarge, "body too large")
		case errors.Is(err, errBudget):
			w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
			s.refuse(w, log, label, ResultOverloaded, http.StatusServiceUnavailable, "too many deliveries being read; retry later")
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The connection cannot be read any more; say why and close it.
			w.Header().Set("Connection", "close")
			log.Warn("webhook body too slow", "remote", r.RemoteAddr, "received", charged)
			s.refuse(w, log, label, ResultTooSlow, http.StatusRequestTimeout, "body sent too slowly")
		default:
			log.Warn("reading webhook body", "error", err)
			s.refuse(w, log, label, ResultMalformed, http.StatusBadRequest, "could not read body")
		}
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

	// A duplicate or a replay (the same signed body under a new delivery
	// id) is dropped before the observer sees it: it tells nothing new,
	// and an old delivery must not pass for news.
	replay := replayKey(sig)
	res := s.queue.Admits(delivery, replay)
	if res == Queued {
		for i := range rt.jobs {
			rt.jobs[i].Replay = replay
		}
		if s.observe != nil {
			for _, j := range rt.jobs {
				s.observe(j)
			}
		}
		res = s.queue.EnqueueAll(rt.jobs)
	}
	switch res {
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
	case Replay:
		// Answered like a duplicate: to GitHub (a redelivery) the work is
		// in hand, and to anyone else the answer is no use.
		log.Info("replayed webhook delivery dropped")
		s.m.Deliveries.WithLabelValues(label, ResultReplay).Inc()
		s.m.Replays.WithLabelValues(label).Inc()
		replyText(w, http.StatusAccepted, "replay")
	default: // Full, Closed
		log.Warn("webhook refused: work queue "+res.String(), "queued", s.queue.Len())
		s.m.Deliveries.WithLabelValues(label, ResultOverloaded).Inc()
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
		replyText(w, http.StatusServiceUnavailable, "overloaded; retry later")
	}
}

// replayKey is the replay key of a verified X-Hub-Signature-256 value: the
// HMAC it carries, as bytes, so that spelling the hex digits in another
// case does not make a new key.
func replayKey(sig string) ReplayKey {
	var k ReplayKey
	hexSum, _ := strings.CutPrefix(sig, signaturePrefix)
	if _, err := hex.Decode(k[:], []byte(hexSum)); err != nil {
		return ReplayKey{} // not reached: the signature was verified
	}
	return k
}

func (s *Server) refuse(w http.ResponseWriter, log *slog.Logger, label, result string, code int, msg string) {
	log.Warn("webhook refused", "result", result, "reason", msg)
	s.m.Deliveries.WithLabelValues(label, result).Inc()
	replyText(w, code, msg)
}

// errBudget is readBody's error when the body's bytes would take the
// unverified bytes past MaxReading.
var errBudget = errors.New("the budget of unverified bytes is spent")

// readBody reads the whole body, at most maxBody bytes. It charges the
// bytes to the budget of unverified bytes as they arrive, and returns what
// it charged (also on error) for the caller to release once the signature
// is checked. It holds the connection to a minimum rate: the read deadline
// is BodyGrace after the read starts, moved on by 1/MinBodyRate seconds per
// byte received, and never past MaxBodyTime. Under a
// ResponseWriter that has no read deadlines (tests) only the budget
// applies.
//
// A body with a known length of up to preallocMax is read into a slice of
// exactly that size, since the slice is kept in the queue; a larger claimed
// length is not trusted for an allocation before the bytes arrive.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (body []byte, charged int64, err error) {
	s.bodies.Add(1)
	defer s.bodies.Add(-1)
	in := http.MaxBytesReader(w, r.Body, s.maxBody)
	defer in.Close()

	rc := http.NewResponseController(w)
	start := time.Now()
	limit := start.Add(MaxBodyTime)
	deadlines := rc.SetReadDeadline(earliest(start.Add(s.grace), limit)) == nil
	if deadlines {
		// Whatever happens, the connection's next request gets the
		// server's own deadlines, not this body's.
		defer rc.SetReadDeadline(time.Time{})
	}

	declared := r.ContentLength
	var buf []byte
	if declared >= 0 && declared <= preallocMax {
		buf = make([]byte, 0, declared)
	} else {
		buf = make([]byte, 0, 4<<10)
	}
	var probe [1]byte
	for {
		dst := buf[len(buf):cap(buf)]
		if len(dst) == 0 {
			if int64(len(buf)) == declared {
				// All the declared bytes are here; this read sees the end.
				dst = probe[:]
			} else {
				buf = slices.Grow(buf, max(4<<10, len(buf)))
				dst = buf[len(buf):cap(buf)]
			}
		}
		n, rerr := in.Read(dst)
		if n > 0 {
			charged += int64(n)
			if s.reading.Add(int64(n)) > s.maxReading {
				s.reading.Add(-int64(n))
				return nil, charged - int64(n), errBudget
			}
			if &dst[0] == &probe[0] {
				// net/http ends a body at its Content-Length, so this is
				// only reached by a reader that does not.
				return nil, charged, fmt.Errorf("body longer than its Content-Length %d", declared)
			}
			buf = buf[:len(buf)+n]
			if deadlines {
				due := time.Duration(float64(charged) / float64(s.minRate) * float64(time.Second))
				rc.SetReadDeadline(earliest(start.Add(s.grace+due), limit))
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if declared >= 0 && errors.Is(rerr, io.ErrUnexpectedEOF) {
				rerr = fmt.Errorf("reading %d-byte body: %w", declared, rerr)
			}
			return nil, charged, rerr
		}
	}
	if cap(buf)-len(buf) > len(buf)/8 {
		buf = append([]byte(nil), buf...)
	}
	return buf, charged, nil
}

// earliest is the earlier of two times.
func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// eventLabel bounds the event label of the deliveries metric: an
// unauthenticated client picks the header, and every distinct value would
// be a new time series.
func eventLabel(event string) string {
	if allowed(event) || event == "ping" {
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

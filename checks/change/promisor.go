package change

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/catalogbot/catalogbot/checks/change/gitobj"
)

// FetchOptions say whether a read of a partial clone fetches an object the
// clone left with its promisor remote, and how much. The zero value
// fetches nothing: a missing object is then reported (ObjectError), as in
// any repository. Only the front ends that read a user's checkout (the
// CLI, the Action) turn it on; the App's clones are complete.
type FetchOptions struct {
	// Enabled lets reads fetch.
	Enabled bool
	// MaxObjects bounds the objects fetched from one repository in the
	// process; 0 is DefaultFetchObjects.
	MaxObjects int
	// MaxBytes bounds their size, content bytes summed once they are
	// fetched (git cannot bound a fetch in bytes ahead): once reached,
	// nothing more is fetched; 0 is DefaultFetchBytes.
	MaxBytes int64
	// Timeout bounds one run of git fetch; 0 is DefaultFetchTimeout.
	Timeout time.Duration
	// Dial decides which network addresses the remote may be at: it is
	// asked to connect to the remote's host and port before git runs,
	// and the address it connected to is the one git is held to (for
	// http and https; git resolves an ssh or git host again itself). The
	// front ends give the egress rule's dialer, the rule every other
	// connection steered by a repository's content passes. nil refuses
	// every remote reached over the network; a local one (a path or
	// file://) needs no dial.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// The bounds of FetchOptions' zero fields: a check reads the catalogs of
// the packages a change touches, a few hundred files at most in the
// largest repository measured (community-operators-prod, 150 MB of
// catalogs).
const (
	DefaultFetchObjects = 5000
	DefaultFetchBytes   = 512 << 20
	DefaultFetchTimeout = 2 * time.Minute
)

// fetchOptions are the process's FetchOptions; see SetFetch.
var fetchOptions struct {
	sync.Mutex
	o FetchOptions
}

// SetFetch sets how reads of partial clones fetch, for the process: it
// applies to every repository Open opens, from the next object missing.
func SetFetch(o FetchOptions) {
	fetchOptions.Lock()
	defer fetchOptions.Unlock()
	fetchOptions.o = o
}

func currentFetch() FetchOptions {
	fetchOptions.Lock()
	defer fetchOptions.Unlock()
	o := fetchOptions.o
	if o.MaxObjects <= 0 {
		o.MaxObjects = DefaultFetchObjects
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultFetchBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultFetchTimeout
	}
	return o
}

// FetchError is why an object a partial clone left out was not fetched
// from its promisor remote: fetching is off, a bound was reached, the
// remote's address is refused, or git fetch failed.
type FetchError struct {
	Remote string
	// Off says fetching is turned off (FetchOptions.Enabled).
	Off bool
	Err error
}

func (e *FetchError) Error() string {
	if e.Off {
		return fmt.Sprintf("fetching from promisor remote %q is turned off", e.Remote)
	}
	return fmt.Sprintf("fetch from promisor remote %q: %v", e.Remote, e.Err)
}

func (e *FetchError) Unwrap() error { return e.Err }

// promisorFetcher fetches the objects a partial clone's reads miss, with
// git, as git itself does when a command needs one: the ids on the
// standard input of `git fetch --filter=blob:none --stdin`. Reads that
// miss while a fetch runs wait for the next, which takes them all: a
// check's decoders read side by side, so one git run serves many.
type promisorFetcher struct {
	dir, remote string

	mu      sync.Mutex
	pending map[plumbing.Hash]*fetchCall
	running bool
	objects int
	bytes   int64
	store   *gitobj.Store
}

type fetchCall struct {
	done chan struct{}
	err  error
}

func newPromisorFetcher(dir, remote string, store *gitobj.Store) *promisorFetcher {
	return &promisorFetcher{dir: dir, remote: remote, store: store, pending: map[plumbing.Hash]*fetchCall{}}
}

// fetch gets h from the remote, or says why not.
func (f *promisorFetcher) fetch(h plumbing.Hash) error {
	o := currentFetch()
	if !o.Enabled {
		return &FetchError{Remote: f.remote, Off: true}
	}
	f.mu.Lock()
	if f.objects >= o.MaxObjects {
		f.mu.Unlock()
		return &FetchError{Remote: f.remote, Err: fmt.Errorf("the bound of %d objects fetched in this run is reached", o.MaxObjects)}
	}
	if f.bytes >= o.MaxBytes {
		f.mu.Unlock()
		return &FetchError{Remote: f.remote, Err: fmt.Errorf("the bound of %d bytes fetched in this run is reached", o.MaxBytes)}
	}
	c, ok := f.pending[h]
	if !ok {
		c = &fetchCall{done: make(chan struct{})}
		f.pending[h] = c
	}
	if !f.running {
		f.running = true
		go f.loop(o)
	}
	f.mu.Unlock()
	<-c.done
	return c.err
}

// loop runs git fetch for what is pending until nothing is.
func (f *promisorFetcher) loop(o FetchOptions) {
	for {
		f.mu.Lock()
		batch := f.pending
		if len(batch) == 0 {
			f.running = false
			f.mu.Unlock()
			return
		}
		f.pending = map[plumbing.Hash]*fetchCall{}
		f.mu.Unlock()

		ids := make([]plumbing.Hash, 0, len(batch))
		for h := range batch {
			ids = append(ids, h)
		}
		err := f.run(o, ids)
		var n int64
		for _, h := range ids {
			c := batch[h]
			if err != nil {
				c.err = &FetchError{Remote: f.remote, Err: err}
			} else if ok, _ := f.store.Has(h); !ok {
				// Asked without fetching: this goroutine is the fetch.
				c.err = &FetchError{Remote: f.remote, Err: errors.New("git fetch succeeded without bringing it")}
			} else if _, size, herr := f.store.Header(h); herr == nil {
				n += size
			}
		}
		// Counted before anyone who asked goes on, so that a read made
		// right after one that fetched meets the bounds it reached.
		f.mu.Lock()
		f.objects += len(ids)
		f.bytes += n
		f.mu.Unlock()
		for _, h := range ids {
			close(batch[h].done)
		}
	}
}

// run fetches ids from the remote with git, within o's time.
func (f *promisorFetcher) run(o FetchOptions, ids []plumbing.Hash) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	pin, err := f.checkRemote(ctx, o)
	if err != nil {
		return err
	}
	args := []string{"-C", f.dir,
		// Only the transports a remote of a clone uses; never a
		// helper a configuration could name (ext::).
		"-c", "protocol.allow=never", "-c", "protocol.https.allow=always", "-c", "protocol.http.allow=always",
		"-c", "protocol.ssh.allow=always", "-c", "protocol.git.allow=always", "-c", "protocol.file.allow=always",
		// What git's own lazy fetch of a missing object runs.
		"-c", "fetch.negotiationAlgorithm=noop"}
	if pin != "" {
		args = append(args, "-c", "http.curloptResolve="+pin)
	}
	args = append(args, "fetch", f.remote, "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no",
		"--filter=blob:none", "--stdin")
	cmd := exec.CommandContext(ctx, "git", args...)
	var in bytes.Buffer
	for _, h := range ids {
		in.WriteString(h.String() + "\n")
	}
	cmd.Stdin = &in
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// No prompt for a password a terminal would answer, and no lazy
	// fetch inside the fetch.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_NO_LAZY_FETCH=1", "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("git fetch of %d object(s) took longer than %s", len(ids), o.Timeout)
		}
		msg := strings.TrimSpace(out.String())
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return fmt.Errorf("git fetch of %d object(s): %v: %s", len(ids), err, msg)
	}
	return nil
}

// checkRemote holds the remote's address to o.Dial. It returns the
// address an http or https remote must be reached at, as git's
// http.curloptResolve takes it ("host:port:address"), "" for a local
// remote.
func (f *promisorFetcher) checkRemote(ctx context.Context, o FetchOptions) (string, error) {
	raw, err := remoteURL(f.dir, f.remote)
	if err != nil {
		return "", err
	}
	scheme, host, port := splitRemote(raw)
	switch scheme {
	case "file":
		return "", nil
	case "http", "https", "ssh", "git":
	default:
		return "", fmt.Errorf("remote URL %q: scheme %q is not fetched from", raw, scheme)
	}
	if o.Dial == nil {
		return "", fmt.Errorf("remote %s is on the network, and no rule for network access was given", host)
	}
	conn, err := o.Dial(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return "", fmt.Errorf("remote %s: %w", host, err)
	}
	addr := conn.RemoteAddr()
	conn.Close()
	if scheme != "http" && scheme != "https" {
		return "", nil
	}
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return "", fmt.Errorf("remote %s: connected to %v, not a TCP address", host, addr)
	}
	ip := ta.IP.String()
	if ta.IP.To4() == nil {
		ip = "[" + ip + "]"
	}
	return host + ":" + port + ":" + ip, nil
}

// remoteURL is remote.<name>.url of the repository at dir.
func remoteURL(dir, remote string) (string, error) {
	st, err := plainStorage(dir)
	if err != nil {
		return "", err
	}
	cfg, err := st.Config()
	if err != nil {
		return "", err
	}
	r, ok := cfg.Remotes[remote]
	if !ok || len(r.URLs) == 0 || r.URLs[0] == "" {
		return "", fmt.Errorf("promisor remote %q has no URL", remote)
	}
	return r.URLs[0], nil
}

// splitRemote reads a remote URL as git does: scheme://host[:port]/path,
// the scp-like user@host:path of ssh, or a local path.
func splitRemote(raw string) (scheme, host, port string) {
	if u, err := url.Parse(raw); err == nil && strings.Contains(raw, "://") {
		scheme = strings.ToLower(u.Scheme)
		host, port = u.Hostname(), u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443", "ssh": "22", "git": "9418"}[scheme]
		}
		return scheme, host, port
	}
	// host:path with no slash before the colon is ssh; anything else is
	// a path.
	if i := strings.Index(raw, ":"); i > 0 && !strings.Contains(raw[:i], "/") && !filepath.IsAbs(raw) {
		h := raw[:i]
		if at := strings.LastIndex(h, "@"); at >= 0 {
			h = h[at+1:]
		}
		return "ssh", strings.Trim(h, "[]"), "22"
	}
	return "file", "", ""
}

// startFetching has store fetch what it lacks from the promisor remote of
// the repository at dir, once per store.
func startFetching(store *gitobj.Store, st *filesystem.Storage, dir string) {
	remote := promisorRemote(st)
	if remote == "" {
		return
	}
	fetchers.Lock()
	defer fetchers.Unlock()
	if fetchers.m[store] {
		return
	}
	fetchers.m[store] = true
	store.SetFetch(newPromisorFetcher(dir, remote, store).fetch)
}

var fetchers = struct {
	sync.Mutex
	m map[*gitobj.Store]bool
}{m: map[*gitobj.Store]bool{}}

// fetchReason is the FetchError in err's chain.
func fetchReason(err error) (*FetchError, bool) {
	var fe *FetchError
	return fe, errors.As(err, &fe)
}

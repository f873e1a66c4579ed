package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook/durable/durabletest"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
	"github.com/catalogbot/catalogbot/webhook/reconcile"
)

// chaosSeedsEnv sets how many seeded schedules TestChaos runs (20 when
// set but empty; unset, the suite is skipped); chaosFirstEnv the first
// seed (1 by default), to look at other schedules than CI's.
const (
	chaosSeedsEnv = "CATALOGBOT_CHAOS_SEEDS"
	chaosFirstEnv = "CATALOGBOT_CHAOS_FIRST"
	// chaosLogsEnv, set, prints the processes' logs of every schedule,
	// not only of one that fails.
	chaosLogsEnv = "CATALOGBOT_CHAOS_LOGS"
)

// chaosRegressions are seeds that once broke an invariant: they run on
// every run of TestChaos, whatever the number of seeds, with the reason
// they were kept.
var chaosRegressions = map[uint64]string{
	// GitHub rejected every token: the push job's fetch failed with the
	// rejected token, kept until a REST request met a 401, and its retry
	// lost the push's payload, so the tip was never published.
	7:  "a publish retried without its push; git kept a rejected token",
	18: "a publish retried without its push; git kept a rejected token",
	// Commits lost in PostgreSQL's immediate stop (synchronous_commit
	// off): the test's server, not the service; the stop is a fast one
	// now.
	23: "a push lost with the commits an immediate stop drops",
	34: "the schema lost with the commits an immediate stop drops",
	// A replica's cache disk full: a fetch found the repository broken
	// and could not rebuild it, and the replica stayed not ready after
	// the disk had room, until some fetch would clear it.
	6: "a cache rebuilt on a full disk stayed not ready once it had room",
}

// chaosFaultsOf are the kept seeds found while the schedule drew from
// fewer faults than today: each draws from as many as it did then (the
// first n cases of fault), so that it replays the schedule that failed.
var chaosFaultsOf = map[uint64]int{7: 8, 18: 8, 23: 8, 34: 8, 6: 11}

// chaosFaults is how many faults a schedule draws from (the cases of
// fault); from chaosSkewFaults on, a replica's own clock may be apart
// too. The twelfth fault, a pull request naming the tarpit registry,
// came after every seed kept so far: each of those draws from fewer.
const (
	chaosFaults     = 12
	chaosSkewFaults = 11
)

// faults is how many faults seed's schedule draws from.
func faultsOf(seed uint64) int {
	if n, ok := chaosFaultsOf[seed]; ok {
		return n
	}
	return chaosFaults
}

// chaosCacheFS is the size of the file system each replica's git cache is
// on (a tmpfs, when one can be mounted): room for the schedule's
// repository many times over, and little to fill.
const chaosCacheFS = 16 << 20

// chaosSkipped are seeds that break an invariant for a reason not fixed
// yet: they are skipped, saying why.
var chaosSkipped = map[uint64]string{}

// Bounds of a schedule once its faults have ended: every approved, valid
// pull request merged, the tip published, every open pull request in a
// state that is not a passing one.
const (
	chaosMergeBound   = 60 * time.Second
	chaosPublishBound = 45 * time.Second
	chaosSettleBound  = 45 * time.Second
	// chaosReadyBound: once the service settled, every replica ready
	// again within this (a readiness probe's answer is kept 3 s, a
	// token is probed again every few seconds).
	chaosReadyBound = 20 * time.Second
)

// TestChaos runs seeded schedules of faults against two real serve
// processes on one PostgreSQL, the fake GitHub and a registry: a replica
// killed (SIGKILL) at a random moment, in the middle of a check run's
// write, of a merge, of a git fetch's pack or of a publish's push, and
// started again on its cache; PostgreSQL stopped for a few seconds;
// GitHub answering 502 for a while, rejecting every token once, answering
// slowly or not at all (past the replicas' timeout); a replica's git
// cache disk full; GitHub's clock apart from the replicas', and one
// replica's own clock apart from the other's by more than a lease; a pull
// request whose bundle image is on a registry that accepts connections
// and never answers (a tarpit). Pull requests are opened meanwhile, some
// approved and valid, some not approved, some invalid. After the faults
// end, each schedule must hold that every approved, valid pull request
// was merged exactly once, within a bound; the image's tag holds the
// digest published from the branch's tip; every open pull request's run
// says why, with the true reason and no passing state; while PostgreSQL
// was stopped, or a replica's cache disk full, its /readyz answered 503,
// and 200 once it was back, and 200 while a pull request waited on the
// tarpit; a pull request on the tarpit stays open, pending, naming it,
// never merged nor failed, and the tarpit is dialled about once per
// cool-down per process, not once per try; and at the end every replica
// is ready. A failing schedule prints its seed and its steps.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and a database, for minutes")
	}
	// Minutes of schedules would double make test's time: the suite runs
	// when asked for (make chaos), with 20 seeds unless told otherwise.
	v, ok := os.LookupEnv(chaosSeedsEnv)
	if !ok {
		t.Skipf("set %s to run the chaos suite (make chaos)", chaosSeedsEnv)
	}
	n, first := 20, uint64(1)
	if v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			t.Fatalf("%s=%q: want a number of seeds", chaosSeedsEnv, v)
		}
	}
	if v := os.Getenv(chaosFirstEnv); v != "" {
		var err error
		if first, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: want a seed", chaosFirstEnv, v)
		}
	}
	var seeds []uint64
	for s := range chaosRegressions {
		seeds = append(seeds, s)
	}
	slices.Sort(seeds)
	for s := first; s < first+uint64(n); s++ {
		if !slices.Contains(seeds, s) {
			seeds = append(seeds, s)
		}
	}
	pg := durabletest.Start(t)
	var worst time.Duration
	worstSeed, ran := uint64(0), 0
	start := time.Now()
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			if why, ok := chaosSkipped[seed]; ok {
				t.Skip(why)
			}
			took := newChaos(t, pg, seed).run()
			ran++
			if took > worst {
				worst, worstSeed = took, seed
			}
		})
	}
	t.Logf("%d schedules in %s; the slowest from the end of its faults to every approved pull request merged: %s (seed %d)",
		ran, time.Since(start).Round(time.Second), worst.Round(100*time.Millisecond), worstSeed)
}

// chaos is one schedule: the world it runs in and what it did.
type chaos struct {
	t     *testing.T
	seed  uint64
	rng   *rand.Rand
	pg    *durabletest.Server
	gh    *githubtest.Server
	repo  *githubtest.Repo
	reg   *registrytest.Registry
	image string
	// tarpit is a registry that accepts connections and never answers;
	// the pull requests of kind "tarpit" name a bundle image on it.
	tarpit *registrytest.Tarpit
	start  time.Time

	mu       sync.Mutex
	replicas [2]*chaosReplica
	steps    []string
	// trigger, when set, is a kill waiting for a GitHub request that
	// matches it.
	trigger *chaosTrigger
	// dead are the processes killed, for their logs.
	dead []*serveProcess

	// slowUntil (Unix nanoseconds) and slowBy make GitHub answer slowly.
	slowUntil atomic.Int64
	slowBy    atomic.Int64
	// silentUntil (Unix nanoseconds) makes GitHub hold every REST
	// request that comes until then without an answer, for longer than
	// the replicas wait for one (chaosGitHubTimeout).
	silentUntil atomic.Int64

	prs []*chaosPR
	// noSmallFS is why the caches are not on file systems of their own
	// ("" when they are): the full-disk fault is then left out.
	noSmallFS string
	// stopped counts the faults after which a lease may rightly be taken
	// over: a replica killed, PostgreSQL stopped (renewals fail).
	stopped atomic.Int32
}

// chaosReplica is one of the two serve processes; p is nil while it is
// down.
type chaosReplica struct {
	name, cfg string
	p         *serveProcess
	addr      string
	// cache is its git cache directory, on a small file system of its
	// own when one could be mounted (smallFS; "" when not).
	cache, smallFS string
	// env is added to its environment: a clock moved (faultclock.go).
	env []string
}

// chaosTrigger stops the first GitHub request match accepts (REST or
// git) until the kill is done.
type chaosTrigger struct {
	match func(*http.Request) bool
	hit   chan struct{}
	done  chan struct{}
	// owner is the replica that sent the request held, -1 when it is
	// not known; set before hit is closed.
	owner int
}

// chaosPR is a pull request of the schedule and what it should come to.
type chaosPR struct {
	pr *githubtest.PR
	// kind is "good" (approved, valid), "unapproved", "invalid" or
	// "tarpit" (approved, its bundle image on the tarpit: it can never be
	// judged, so it stays open, waiting on that registry).
	kind string
	// opened is when the schedule opened it, on the test's clock.
	opened time.Time
}

const chaosSecret = "0123456789abcdef0123456789abcdef"

// chaosGitHubTimeout is the replicas' githubTimeout: how long they wait
// for an answer of GitHub's before they give the attempt up. The fault
// "GitHub silent" holds requests longer than this, "GitHub slow" less.
const chaosGitHubTimeout = 3 * time.Second

// chaosReferenceTimeout is the policy's limits.referenceTimeout, and
// chaosCoolDown the replicas' registryCoolDown: what a pull request on
// the tarpit costs, in a worker's time and in connections.
const (
	chaosReferenceTimeout = 3 * time.Second
	chaosCoolDown         = 5 * time.Second
)

func newChaos(t *testing.T, pg *durabletest.Server, seed uint64) *chaos {
	c := &chaos{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x6368616f73)), pg: pg, start: time.Now()}
	dbURL, err := pg.CreateDatabase(fmt.Sprintf("chaos_%d_%d", seed, time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CATALOGBOT_DATABASE_URL", dbURL)
	c.reg = registrytest.New(t)
	c.image = c.reg.Ref("acme/catalog:latest")
	c.tarpit = registrytest.NewTarpit(t)
	c.gh = githubtest.New(t)
	// Each reference is given chaosReferenceTimeout: a check that
	// contacts the tarpit holds its worker that long.
	c.repo = c.gh.AddRepo("acme", "catalog", map[string]string{
		".catalogbot.yaml": "merge:\n  enabled: true\n  method: squash\npublish:\n  image: " + c.image + "\n  base: scratch\n" +
			"limits:\n  referenceTimeout: " + chaosReferenceTimeout.String() + "\n",
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/.indexignore":     "OWNERS\n",
		"catalog/foo/catalog.yaml": checkCatalog,
	})
	c.gh.HookResponses(c.hook)
	c.gh.HookGit(func(r *http.Request, _ string) { c.hold(r) })

	dir := t.TempDir()
	key := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(key, c.gh.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	fsWhy := ""
	for i, name := range []string{"a", "b"} {
		cache := filepath.Join(dir, name+"-cache")
		small := ""
		if fsWhy == "" {
			if fsWhy = mountSmallFS(t, cache, chaosCacheFS); fsWhy == "" {
				small = cache
			}
		}
		cfg := filepath.Join(dir, name+".yaml")
		// The shortest resync and a short lease: a schedule settles in
		// seconds. The tarpit is on loopback, which pull request checks
		// may reach only when allowed; a job gives up waiting for
		// another's contact with it after half a second, and its breaker
		// stays open chaosCoolDown (doubled after each failed probe).
		conf := fmt.Sprintf("appID: %d\nprivateKeyFile: %s\ngithubURL: %s/\nlisten: 127.0.0.1:0\nmetricsAddr: 127.0.0.1:0\nworkers: 2\nresyncInterval: 30s\ncacheDir: %s\nleaseTTL: 3s\ngithubTimeout: %s\n"+
			"allowPrivateRegistries: [%q]\nregistryHostWait: 500ms\nregistryCoolDown: %s\n",
			c.gh.AppID(), key, c.gh.URL, cache, chaosGitHubTimeout, c.tarpit.Addr, chaosCoolDown)
		if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		c.replicas[i] = &chaosReplica{name: name, cfg: cfg, cache: cache, smallFS: small}
	}
	c.noSmallFS = fsWhy
	t.Cleanup(func() {
		for _, r := range c.replicas {
			if r.p != nil && r.p.cmd.ProcessState == nil {
				_ = r.p.cmd.Process.Kill()
				<-r.p.done
			}
		}
	})
	return c
}

// logf notes a step of the schedule, with its time since the start.
func (c *chaos) logf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps = append(c.steps, fmt.Sprintf("%6.2fs ", time.Since(c.start).Seconds())+fmt.Sprintf(format, args...))
}

// hook is the fake GitHub's response hook: it answers slowly, or not
// before the replica gave up waiting, while the schedule says so, and
// holds a request a kill waits for.
func (c *chaos) hook(r *http.Request, _ *githubtest.Response) {
	now := time.Now().UnixNano()
	if now < c.silentUntil.Load() {
		// Held until the replica's attempt has timed out, then
		// answered to no one.
		select {
		case <-time.After(chaosGitHubTimeout + time.Second):
		case <-r.Context().Done():
		}
	} else if now < c.slowUntil.Load() {
		time.Sleep(time.Duration(c.slowBy.Load()))
	}
	c.hold(r)
}

// hold holds r, a REST request or a git transfer half sent, until the
// kill waiting for it is done, when it is the one the kill waits for.
func (c *chaos) hold(r *http.Request) {
	c.mu.Lock()
	tr := c.trigger
	if tr != nil && tr.match(r) {
		c.trigger = nil
	} else {
		tr = nil
	}
	c.mu.Unlock()
	if tr != nil {
		tr.owner = c.sender(r)
		close(tr.hit)
		select {
		case <-tr.done:
		case <-time.After(30 * time.Second):
		}
	}
}

// sender is the replica whose connection r came on, -1 when none is
// found: the socket whose local port is r's remote port and whose peer
// is the fake's port (/proc/net/tcp), among the replicas' open files.
// The fake sees only an address; the kill should land on the process
// that is in the middle of the exchange, not on the other.
func (c *chaos) sender(r *http.Request) int {
	_, port, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return -1
	}
	local, _ := strconv.Atoi(port)
	srv, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return -1
	}
	_, sport, _ := net.SplitHostPort(srv.String())
	remote, _ := strconv.Atoi(sport)
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return -1
	}
	inode := ""
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		lp, _ := strconv.ParseUint(f[1][strings.LastIndexByte(f[1], ':')+1:], 16, 32)
		rp, _ := strconv.ParseUint(f[2][strings.LastIndexByte(f[2], ':')+1:], 16, 32)
		if int(lp) == local && int(rp) == remote {
			inode = f[9]
			break
		}
	}
	if inode == "" {
		return -1
	}
	want := "socket:[" + inode + "]"
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, rep := range c.replicas {
		if rep.p == nil {
			continue
		}
		fds := fmt.Sprintf("/proc/%d/fd", rep.p.cmd.Process.Pid)
		ents, _ := os.ReadDir(fds)
		for _, e := range ents {
			if l, _ := os.Readlink(filepath.Join(fds, e.Name())); l == want {
				return i
			}
		}
	}
	return -1
}

func (c *chaos) startReplica(i int) {
	r := c.replicas[i]
	p := startServe(c.t, r.cfg, chaosSecret, r.env...)
	addr := <-p.addr
	p.addr <- addr
	c.mu.Lock()
	r.p, r.addr = p, addr
	c.mu.Unlock()
}

// live is the address of a replica that is up, "" when none is.
func (c *chaos) live() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var up []string
	for _, r := range c.replicas {
		if r.p != nil {
			up = append(up, r.addr)
		}
	}
	if len(up) == 0 {
		return ""
	}
	return up[rand.IntN(len(up))]
}

// deliver posts a delivery to a replica that is up, and to another, or
// again, until one takes it, as a load balancer in front of the replicas
// and GitHub's redelivery would; under the same delivery id, so that a
// delivery taken but not answered is not taken twice.
func (c *chaos) deliver(event string, body []byte) {
	id := githubtest.NewDeliveryID()
	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if addr := c.live(); addr != "" {
			req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(body))
			if err != nil {
				c.t.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", event)
			req.Header.Set("X-GitHub-Delivery", id)
			req.Header.Set("X-GitHub-Hook-ID", "1")
			req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
			req.Header.Set("X-GitHub-Hook-Installation-Target-ID", fmt.Sprint(c.gh.AppID()))
			req.Header.Set("X-Hub-Signature-256", githubtest.Sign(chaosSecret, body))
			if resp, err := client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusAccepted {
					return
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Errorf("no replica took the %s delivery %s within a minute", event, id)
}

// deliverPushes delivers the push of every merge, as GitHub does, until
// stop is closed.
func (c *chaos) deliverPushes(stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(func() {
		sent := 0
		for {
			merges := c.repo.Merges()
			for _, m := range merges[sent:] {
				c.deliver("push", c.gh.Payload("push", "", githubtest.PayloadArgs{Repo: c.repo, After: m.SHA}))
			}
			sent = len(merges)
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	return &wg
}

// open opens a pull request of kind, each on a file of its own so that
// they merge one after another without conflicts: a note blob of package
// foo, which changes the published catalog.
func (c *chaos) open(kind string) {
	n := len(c.prs) + 1
	branch := fmt.Sprintf("change-%d", n)
	file := fmt.Sprintf("catalog/foo/note-%d.yaml", n)
	content := fmt.Sprintf("schema: example.com/note\npackage: foo\nvalue: %d\n", n)
	author := "alice"
	switch kind {
	case "unapproved":
		author = "bob"
	case "invalid":
		// A file that does not parse.
		content = fmt.Sprintf("{not: a catalog %d", n)
	case "tarpit":
		// A bundle of its own channel, so that it is valid but for its
		// image, which only the tarpit could tell about.
		file = fmt.Sprintf("catalog/foo/tarpit-%d.yaml", n)
		content = fmt.Sprintf("---\nschema: olm.channel\npackage: foo\nname: tarpit-%[1]d\nentries:\n  - name: foo.v2.%[1]d.0\n"+
			"---\nschema: olm.bundle\npackage: foo\nname: foo.v2.%[1]d.0\nimage: %[2]s/x@sha256:%064[1]x\n"+
			"properties:\n  - type: olm.package\n    value:\n      packageName: foo\n      version: 2.%[1]d.0\n", n, c.tarpit.Addr)
	}
	c.repo.Commit(branch, map[string]string{file: content}, "note "+fmt.Sprint(n))
	pr := c.repo.OpenPR(author, branch, "main")
	c.prs = append(c.prs, &chaosPR{pr: pr, kind: kind, opened: time.Now()})
	c.logf("#%d opened by %s (%s)", pr.Number, author, kind)
	c.deliver("pull_request", c.gh.Payload("pull_request", "opened", githubtest.PayloadArgs{Repo: c.repo, PR: pr.Number}))
}

// kill kills replica i with SIGKILL and starts it again on its cache
// directory after a moment.
func (c *chaos) kill(i int, when string) {
	c.mu.Lock()
	r := c.replicas[i]
	p := r.p
	r.p = nil
	c.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	c.stopped.Add(1)
	c.mu.Lock()
	c.dead = append(c.dead, p)
	c.mu.Unlock()
	c.logf("replica %s killed %s", r.name, when)
	time.Sleep(time.Duration(c.rng.IntN(1000)) * time.Millisecond)
	c.startReplica(i)
	c.logf("replica %s started again", r.name)
}

// killOn kills the replica that sent a GitHub request that match
// accepts, once one arrives (holding it until then), or a random one
// after wait if none does.
func (c *chaos) killOn(what string, match func(*http.Request) bool, wait time.Duration) {
	i := c.rng.IntN(2)
	tr := &chaosTrigger{match: match, hit: make(chan struct{}), done: make(chan struct{}), owner: -1}
	c.mu.Lock()
	c.trigger = tr
	c.mu.Unlock()
	when := "after " + wait.String() + " without " + what
	hit := false
	select {
	case <-tr.hit:
		hit = true
	case <-time.After(wait):
		c.mu.Lock()
		if c.trigger == tr {
			c.trigger = nil
		}
		c.mu.Unlock()
		select {
		case <-tr.hit:
			hit = true
		default:
		}
	}
	if hit {
		when = "in the middle of " + what
		if tr.owner >= 0 {
			i = tr.owner
		} else {
			when += " (another replica's, its sender not found)"
		}
	}
	c.kill(i, when)
	close(tr.done)
}

var (
	checkRunPath = regexp.MustCompile(`/check-runs(/\d+)?$`)
	mergePath    = regexp.MustCompile(`/pulls/\d+/merge$`)
	// uploadPackPath is a git fetch's pack, the fake's answer to it held
	// with half of it sent.
	uploadPackPath = regexp.MustCompile(`\.git/git-upload-pack$`)
)

// fault draws one fault and runs it to its end.
func (c *chaos) fault() {
	t := c.t
	switch c.rng.IntN(faultsOf(c.seed)) {
	case 0:
		d := time.Duration(c.rng.IntN(1500)) * time.Millisecond
		time.Sleep(d)
		c.kill(c.rng.IntN(2), "at a random moment")
	case 1:
		c.killOn("a check run's write", func(r *http.Request) bool {
			return r.Method != http.MethodGet && checkRunPath.MatchString(r.URL.Path)
		}, 3*time.Second)
	case 2:
		c.killOn("a merge", func(r *http.Request) bool {
			return r.Method == http.MethodPut && mergePath.MatchString(r.URL.Path)
		}, 4*time.Second)
	case 3:
		// The first push of a manifest is held, so that the kill finds
		// the publish under way.
		f := c.reg.Fail(registrytest.Fault{Method: http.MethodPut, Kind: "manifests", Delay: 2 * time.Second, Times: 1})
		deadline := time.Now().Add(4 * time.Second)
		for c.reg.Hits(f) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		when := "in the middle of a publish's push"
		if c.reg.Hits(f) == 0 {
			when = "after 4s without a publish"
		}
		c.kill(c.rng.IntN(2), when)
	case 4:
		c.postgresOutage()
	case 5:
		d := time.Duration(1000+c.rng.IntN(3000)) * time.Millisecond
		c.logf("GitHub answers 502 for %s", d)
		c.gh.FailUntil(time.Now().Add(d), http.StatusBadGateway)
		time.Sleep(d)
	case 6:
		c.logf("GitHub rejects every token issued so far (401)")
		c.gh.ExpireTokens()
		time.Sleep(time.Duration(c.rng.IntN(1000)) * time.Millisecond)
	case 7:
		d := time.Duration(2000+c.rng.IntN(3000)) * time.Millisecond
		by := time.Duration(300+c.rng.IntN(1700)) * time.Millisecond
		c.logf("GitHub answers every request %s late for %s", by, d)
		c.slowBy.Store(int64(by))
		c.slowUntil.Store(time.Now().Add(d).UnixNano())
		time.Sleep(d)
	case 8:
		// No answer at all, not an error: each request held past the
		// replicas' timeout, so that only the timeout ends the wait.
		d := time.Duration(1000+c.rng.IntN(3000)) * time.Millisecond
		c.logf("GitHub leaves every request unanswered for %s (each held %s)", d, chaosGitHubTimeout+time.Second)
		c.silentUntil.Store(time.Now().Add(d).UnixNano())
		time.Sleep(d)
	case 9:
		c.killOn("a git fetch's pack", func(r *http.Request) bool {
			return uploadPackPath.MatchString(r.URL.Path)
		}, 4*time.Second)
	case 10:
		c.diskFull(c.rng.IntN(2), time.Duration(1000+c.rng.IntN(3000))*time.Millisecond)
	case 11:
		c.tarpitPR()
	default:
		t.Fatal("no such fault")
	}
}

// diskFull fills replica i's git cache's file system for d: its /readyz
// must answer 503 naming the git cache within a few seconds, the work it
// meanwhile takes fail and be retried; once space is back, /readyz must
// answer 200 again within 20 s.
func (c *chaos) diskFull(i int, d time.Duration) {
	t := c.t
	r := c.replicas[i]
	if r.smallFS == "" {
		c.logf("no full disk (%s)", c.noSmallFS)
		return
	}
	ballast := filepath.Join(r.smallFS, "ballast")
	f, err := os.Create(ballast)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	full := time.Now()
	c.logf("replica %s's git cache disk full", r.name)
	// A replica killed meanwhile is started again: the one up now.
	addr := func() string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return r.addr
	}
	for {
		code, body := readyzAnswer(addr())
		if code == http.StatusServiceUnavailable && strings.Contains(body, "git cache") {
			c.logf("replica %s's /readyz answers 503: %s", r.name, body)
			break
		}
		if time.Since(full) > 10*time.Second {
			t.Errorf("replica %s's /readyz answered %d %q, not 503 naming the git cache, for 10s of a full disk", r.name, code, body)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Until(full.Add(d)))
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	c.logf("replica %s's git cache disk has room again", r.name)
	for {
		code, body := readyzAnswer(addr())
		if code == http.StatusOK {
			c.logf("replica %s's /readyz answers 200", r.name)
			return
		}
		if time.Since(freed) > 20*time.Second {
			t.Errorf("replica %s's /readyz answered %d %q 20s after its disk had room again", r.name, code, body)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tarpitPR opens an approved pull request whose bundle image is on the
// tarpit, a registry that accepts connections and never answers. A
// registry a pull request names being down is not the service's fault:
// from before the pull request is opened until its run says it waits on
// the tarpit, every replica's /readyz must answer 200.
func (c *chaos) tarpitPR() {
	t := c.t
	addrs := func() []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return []string{c.replicas[0].addr, c.replicas[1].addr}
	}
	// Ready first (a replica may have been started again by the last
	// fault), so that a 503 to come is the tarpit's.
	for _, addr := range addrs() {
		for deadline := time.Now().Add(chaosReadyBound); readyz(addr) != http.StatusOK; {
			if time.Now().After(deadline) {
				t.Errorf("/readyz of %s did not answer 200 before the pull request on the tarpit", addr)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	c.logf("the tarpit %s named in a pull request's bundle image", c.tarpit.Addr)
	c.open("tarpit")
	m := c.prs[len(c.prs)-1]
	deadline := time.Now().Add(chaosReferenceTimeout + 20*time.Second)
	for {
		for i, addr := range addrs() {
			if code, body := readyzAnswer(addr); code != http.StatusOK {
				t.Errorf("replica %s's /readyz answered %d %q while a pull request waited on the tarpit", c.replicas[i].name, code, body)
				return
			}
		}
		if c.reason(m) == "" {
			c.logf("#%d waits on the tarpit; %d connections to it so far", m.pr.Number, c.tarpit.Conns())
			return
		}
		if time.Now().After(deadline) {
			// Not an error yet: the invariants after the faults
			// say whether it came to the true reason.
			c.logf("#%d not yet waiting on the tarpit: %s", m.pr.Number, c.reason(m))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readyz is a replica's /readyz status, 0 when it does not answer. A 503
// that does not name the state as its reason counts as 0 too: while
// PostgreSQL is stopped, that is the reason.
func readyz(addr string) int {
	code, body := readyzAnswer(addr)
	if code == http.StatusServiceUnavailable && !strings.Contains(body, "state") {
		return 0
	}
	return code
}

// readyzAnswer is a replica's /readyz status and body, 0 when it does not
// answer.
func readyzAnswer(addr string) (int, string) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// postgresOutage stops PostgreSQL until a replica says it is not ready,
// and a little longer, then starts it and waits for the replica to be
// ready again.
func (c *chaos) postgresOutage() {
	t := c.t
	addr := c.live()
	// Ready first, so that the 503 to come is the stop's.
	for deadline := time.Now().Add(20 * time.Second); readyz(addr) != http.StatusOK; {
		if time.Now().After(deadline) {
			t.Errorf("/readyz of %s did not answer 200 before PostgreSQL's stop", addr)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.pg.Stop(); err != nil {
		t.Fatal(err)
	}
	c.stopped.Add(1)
	stopped := time.Now()
	c.logf("PostgreSQL stopped")
	// A probe's answer is kept 3 s and bounded by 2 s.
	for readyz(addr) != http.StatusServiceUnavailable {
		if time.Since(stopped) > 10*time.Second {
			c.pg.Start()
			t.Errorf("/readyz of %s did not answer 503 within 10s of PostgreSQL's stop", addr)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.logf("/readyz answers 503")
	time.Sleep(time.Duration(c.rng.IntN(2000)) * time.Millisecond)
	if err := c.pg.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	c.logf("PostgreSQL started")
	for readyz(addr) != http.StatusOK {
		if time.Since(started) > 20*time.Second {
			t.Errorf("/readyz of %s did not answer 200 within 20s of PostgreSQL's start", addr)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.logf("/readyz answers 200")
}

func (c *chaos) merged(pr *githubtest.PR) int {
	n := 0
	for _, m := range c.repo.Merges() {
		if m.Number == pr.Number {
			n++
		}
	}
	return n
}

// ownRun is the App's newest catalogbot run at sha, nil when it has none.
func (c *chaos) ownRun(sha string) *githubtest.CheckRun {
	var found *githubtest.CheckRun
	for _, r := range c.repo.CheckRuns(sha) {
		if r.Name == reconcile.CheckRunName && r.AppID == c.gh.AppID() && (found == nil || r.ID > found.ID) {
			found = &r
		}
	}
	return found
}

// chaosPassing are the codes of states the App passes through: once the
// service settled, no pull request may be left in one.
var chaosPassing = []policy.Code{policy.CodeChecking, policy.CodeMerging, policy.CodeRetrying, policy.CodeUnexplained}

// reason is what is wrong with an open pull request's run, "" when it
// states the true reason.
func (c *chaos) reason(m *chaosPR) string {
	run := c.ownRun(m.pr.HeadSHA())
	if run == nil {
		return "no catalogbot run at its head"
	}
	said, ok := review.ParseBlockedBy(run.Text)
	switch {
	case !ok || len(said) == 0:
		return "its run gives no blocked-by line:\n" + run.Text
	case slices.ContainsFunc(said, func(c policy.Code) bool { return slices.Contains(chaosPassing, c) }):
		return fmt.Sprintf("left in a passing state %q:\n%s", said, run.Text)
	}
	if m.kind == "tarpit" {
		// Pending, waiting on the tarpit by name; never failed: that the
		// registry does not answer says nothing of the image.
		text := run.Title + "\n" + run.Summary + "\n" + run.Text
		for _, a := range run.Annotations {
			text += "\n" + a.Message
		}
		switch {
		case run.Conclusion == "failure" || slices.Contains(said, policy.CodeChecksFailed):
			return fmt.Sprintf("reported invalid (%s, blocked by %q):\n%s", run.Conclusion, said, text)
		case !slices.Contains(said, policy.CodeChecksPending):
			return fmt.Sprintf("blocked by %q, not by %s:\n%s", said, policy.CodeChecksPending, text)
		case !strings.Contains(text, "registry "+c.tarpit.Addr):
			return fmt.Sprintf("pending without naming the registry %s:\n%s", c.tarpit.Addr, text)
		}
		return ""
	}
	want := map[string]policy.Code{"unapproved": policy.CodeApprovalMissing, "invalid": policy.CodeChecksFailed}[m.kind]
	if want == "" {
		return fmt.Sprintf("approved and valid, yet open: %q\n%s", said, run.Text)
	}
	if !slices.Contains(said, want) {
		return fmt.Sprintf("blocked by %q, not by %s:\n%s", said, want, run.Text)
	}
	return ""
}

// run plays the schedule, then checks the invariants; it returns the time
// from the end of the faults to every approved, valid pull request merged.
func (c *chaos) run() time.Duration {
	t := c.t
	defer func() {
		if t.Failed() || os.Getenv(chaosLogsEnv) != "" {
			t.Logf("seed %d\n%s\n%s", c.seed, c.story(), c.processLogs())
		}
	}()
	if c.rng.IntN(2) == 0 {
		// GitHub's clock apart from the replicas' (both share the
		// machine's): GitHub stamps every time and its Date header on
		// its own clock from the first request on.
		skew := time.Duration(c.rng.IntN(20)-10) * time.Minute
		skew += time.Duration(c.rng.IntN(60)) * time.Second
		c.gh.Advance(skew)
		c.logf("GitHub's clock is %s off the replicas'", skew)
	}
	if faultsOf(c.seed) >= chaosSkewFaults {
		// In half the schedules, replica b's own clock apart from a's
		// (and PostgreSQL's, and GitHub's) by more than a lease: it must
		// take no live lease over, since leases are told by the
		// database's clock. Drawn from a stream of its own, so that the
		// rest of the schedule is what the seed drew before.
		skewRng := rand.New(rand.NewPCG(c.seed, 0x736b6577))
		if skewRng.IntN(2) == 0 {
			skew := time.Duration(4000+skewRng.IntN(4000)) * time.Millisecond
			if skewRng.IntN(2) == 0 {
				skew = -skew
			}
			c.replicas[1].env = []string{envClockOffset + "=" + skew.String(), envUnsafeFaults + "=clock-offset"}
			c.logf("replica b's clock is %s off a's (the lease is 3s)", skew)
		}
	}
	c.startReplica(0)
	c.startReplica(1)
	stop := make(chan struct{})
	var once sync.Once
	pushes := c.deliverPushes(stop)
	// Ended before the test is, even when it fails on the way.
	endPushes := func() { once.Do(func() { close(stop) }); pushes.Wait() }
	t.Cleanup(endPushes)

	// The schedule: pull requests opened, faults among them.
	var steps []string
	prs := 4 + c.rng.IntN(5)
	for i := range prs {
		kind := "good"
		if i >= 2 {
			kind = []string{"good", "good", "good", "unapproved", "invalid"}[c.rng.IntN(5)]
		}
		steps = append(steps, kind)
	}
	for range 2 + c.rng.IntN(3) {
		steps = append(steps, "fault")
	}
	// The last step is a fault, so that the time after the faults is
	// the service's recovery, not the handling of new pull requests.
	c.rng.Shuffle(len(steps)-1, func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
	for _, s := range steps {
		if s == "fault" {
			c.fault()
		} else {
			c.open(s)
		}
		time.Sleep(time.Duration(c.rng.IntN(500)) * time.Millisecond)
	}
	faultsEnded := time.Now()
	c.logf("the faults end")

	// Every approved, valid pull request merged.
	var took time.Duration
	for {
		left := 0
		for _, m := range c.prs {
			if m.kind == "good" && c.merged(m.pr) == 0 {
				left++
			}
		}
		if left == 0 {
			took = time.Since(faultsEnded)
			c.logf("every approved pull request merged, %s after the faults", took.Round(100*time.Millisecond))
			break
		}
		if time.Since(faultsEnded) > chaosMergeBound {
			t.Errorf("%d approved, valid pull requests not merged within %s of the faults' end", left, chaosMergeBound)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The tip's catalog published, and the tag holding its digest.
	if merges := c.repo.Merges(); len(merges) > 0 {
		tip := merges[len(merges)-1].SHA
		deadline := time.Now().Add(chaosPublishBound)
		var published string
		for published == "" && time.Now().Before(deadline) {
			published = c.publishedDigest(tip)
			time.Sleep(50 * time.Millisecond)
		}
		switch got, err := crane.Digest(c.image, crane.Insecure); {
		case published == "":
			t.Errorf("the tip %.7s was not published within %s", tip, chaosPublishBound)
		case err != nil:
			t.Errorf("the tag %s: %v", c.image, err)
		case got != published:
			t.Errorf("the tag %s holds %s, not the tip %.7s's %s", c.image, got, tip, published)
		default:
			c.logf("the tip %.7s published as %s", tip, published)
		}
	}

	// Every open pull request says why, truly, in no passing state.
	deadline := time.Now().Add(chaosSettleBound)
	for {
		var wrong []string
		for _, m := range c.prs {
			if m.pr.State() != "open" {
				continue
			}
			if why := c.reason(m); why != "" {
				wrong = append(wrong, fmt.Sprintf("#%d (%s): %s", m.pr.Number, m.kind, why))
			}
		}
		if len(wrong) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("open pull requests %s after the faults' end:\n%s", time.Since(faultsEnded).Round(time.Second), strings.Join(wrong, "\n"))
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// With every fault over and the work done, every replica says it
	// is ready: a /readyz that stays 503 once all is well would keep
	// a replica out of its load balancer for nothing.
	for _, r := range c.replicas {
		c.mu.Lock()
		addr := r.addr
		c.mu.Unlock()
		deadline := time.Now().Add(chaosReadyBound)
		for {
			code, body := readyzAnswer(addr)
			if code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("replica %s's /readyz answers %d %q %s after every pull request settled", r.name, code, body, chaosReadyBound)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// No replica took work over from another that lived and could
	// renew its lease (whatever their clocks say): only a kill or
	// PostgreSQL's stop lets one lapse.
	if c.stopped.Load() == 0 {
		for _, line := range strings.Split(c.allLogs(), "\n") {
			if strings.Contains(line, "took over work") {
				t.Errorf("work taken over with no replica stopped and PostgreSQL up: %s", line)
			}
		}
	}
	// A second merge would show by now; none may.
	time.Sleep(time.Second)
	endPushes()
	c.checkTarpitConns()
	for _, m := range c.prs {
		n := c.merged(m.pr)
		switch {
		case n > 1:
			t.Errorf("#%d (%s) merged %d times", m.pr.Number, m.kind, n)
		case n == 1 && m.kind != "good":
			t.Errorf("#%d (%s) merged", m.pr.Number, m.kind)
		}
	}
	t.Logf("%d pull requests, %d merged, every approved one %s after the faults' end\n%s",
		len(c.prs), len(c.repo.Merges()), took.Round(100*time.Millisecond), c.story())
	return took
}

// checkTarpitConns holds the tarpit's connections to the bound the
// shared breaker promises: each process contacts it once, then at most
// once per cool-down (which doubles after every failed probe: the bound
// assumes none, and is generous). A contact is up to 2 connections,
// https and plain http (a loopback registry): the images check's; the
// truthfulness check's render of the same image takes a slot of the host
// too and waits for that contact's outcome rather than dial (it dialled
// as well before, 4 connections a contact). Without a pull request on
// it, nothing may dial it.
func (c *chaos) checkTarpitConns() {
	const chaosConnsPerContact = 2
	var first time.Time
	for _, m := range c.prs {
		if m.kind == "tarpit" {
			first = m.opened
			break
		}
	}
	conns := c.tarpit.Conns()
	if first.IsZero() {
		if conns != 0 {
			c.t.Errorf("%d connections to the tarpit, which no pull request names", conns)
		}
		return
	}
	c.mu.Lock()
	processes := 2 + len(c.dead)
	c.mu.Unlock()
	contacts := 1 + int(time.Since(first)/chaosCoolDown)
	bound := chaosConnsPerContact * processes * contacts
	c.logf("%d connections to the tarpit (bound %d: %d processes, %d contacts each at most)", conns, bound, processes, contacts)
	if conns > bound {
		c.t.Errorf("%d connections to the tarpit in %s, more than %d (%d processes, each contacting it at most once per %s cool-down, %d connections a contact)",
			conns, time.Since(first).Round(time.Second), bound, processes, chaosCoolDown, chaosConnsPerContact)
	}
}

// publishedDigest is the digest the newest successful publish run at sha
// names, "" when there is none.
func (c *chaos) publishedDigest(sha string) string {
	digest := regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	found := ""
	var id int64
	for _, r := range c.repo.CheckRuns(sha) {
		if r.Name == reconcile.PublishCheckRunName && r.Conclusion == "success" && r.ID > id {
			if d := digest.FindString(r.Title); d != "" {
				found, id = d, r.ID
			}
		}
	}
	return found
}

func (c *chaos) story() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return "schedule:\n  " + strings.Join(c.steps, "\n  ")
}

// allLogs are every process's whole log, the killed ones' included.
func (c *chaos) allLogs() string {
	c.mu.Lock()
	procs := append([]*serveProcess(nil), c.dead...)
	for _, r := range c.replicas {
		if r.p != nil {
			procs = append(procs, r.p)
		}
	}
	c.mu.Unlock()
	var b strings.Builder
	for _, p := range procs {
		b.WriteString(p.logs())
	}
	return b.String()
}

// processLogs are the last lines of every process's log, the killed
// ones' included.
func (c *chaos) processLogs() string {
	c.mu.Lock()
	procs := append([]*serveProcess(nil), c.dead...)
	for _, r := range c.replicas {
		if r.p != nil {
			procs = append(procs, r.p)
		}
	}
	c.mu.Unlock()
	var b strings.Builder
	for i, p := range procs {
		lines := strings.Split(strings.TrimRight(p.logs(), "\n"), "\n")
		if len(lines) > 120 {
			lines = lines[len(lines)-120:]
		}
		fmt.Fprintf(&b, "process %d (pid %d), its last lines:\n%s\n", i+1, p.cmd.Process.Pid, strings.Join(lines, "\n"))
	}
	return b.String()
}

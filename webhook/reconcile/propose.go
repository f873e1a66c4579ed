package reconcile

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/gitcache"
)

// The App proposes by itself: every ProposeOptions.Interval it reads the
// policy of each installation repository's default branch and, for each
// package its propose list watches, runs package policy/propose on the
// branch's tip (the one place proposals are made, as catalogbot propose
// makes them). A package with new releases gets one pull request from the
// branch catalogbot/propose/<package>, written through GitHub's git data
// API (no clone is pushed), labelled ProposalLabel; a newer release before
// the merge moves that branch and edits the pull request; a proposal whose
// releases are in the catalog by other means is closed. The App's own
// check runs on it at once (the round returns its job), and its owners
// approve it as any other.
//
// Replicas share the work through the state: each repository's round is
// made under a lease (the merge turns' mechanism of turn.go, under a key
// of its own), and the state says when the repository was last polled,
// so that a round one replica just made is not made again by the next.
// What a round learns (when each release was first seen, which pull
// request proposes what) is kept there too, so a restart or another
// replica carries on with it.

// ProposalLabel marks the App's proposal pull requests.
const ProposalLabel = "catalogbot/proposal"

// ProposalBranch is the branch of a package's proposal.
func ProposalBranch(pkg string) string { return "catalogbot/propose/" + pkg }

// ProposeOptions turn on the App's proposals.
type ProposeOptions struct {
	// Registry reaches the watched repositories: an anonymous or
	// read-only keychain and the egress rule of the checks.
	Registry propose.Registry
	// Interval is how often each repository is polled; 0 is the
	// configuration's ProposeInterval, or webhook.DefaultProposeInterval.
	Interval time.Duration
	// UnplacedAfter is when a release seen without a catalog entry or an
	// open proposal shows in Metrics.BundleUnplaced; 0 is the
	// configuration's, or webhook.DefaultUnplacedAfter.
	UnplacedAfter time.Duration
}

// proposer is the App's proposing state in this process.
type proposer struct {
	o ProposeOptions
	// mu guards watched, kicked and memory.
	mu sync.Mutex
	// watched are the bundle repositories each repository's policy
	// watched at its last poll, for the registry notifications.
	watched map[string][]string
	// kicked are the repositories a notification asked to poll now.
	kicked map[string]bool
	kick   chan struct{}
	// memory is the state without webhook.Facts.
	memory map[string][]byte
}

const proposeNS = "proposals"

// proposalState is what the state keeps of one repository's proposals.
type proposalState struct {
	// Polled is when the repository was last polled.
	Polled time.Time `json:"polled"`
	// Seen are the releases newer than the catalog found, by package
	// and version: when each was first seen.
	Seen map[string]map[string]time.Time `json:"seen,omitempty"`
	// Open are the open proposals, by package.
	Open map[string]openProposal `json:"open,omitempty"`
	// Declined are, by package, the releases of a proposal people
	// closed without merging: they are not proposed again (the alarm
	// still counts them); a newer release is.
	Declined map[string][]string `json:"declined,omitempty"`
}

// openProposal is one package's open pull request.
type openProposal struct {
	PR       int      `json:"pr"`
	Head     string   `json:"head"`
	Versions []string `json:"versions"`
}

func (p *proposer) load(ctx context.Context, facts webhook.Facts, repo string) (proposalState, error) {
	var b []byte
	var ok bool
	if facts != nil {
		var err error
		if b, ok, err = facts.Get(ctx, proposeNS, repo); err != nil {
			return proposalState{}, err
		}
	} else {
		p.mu.Lock()
		b, ok = p.memory[repo]
		p.mu.Unlock()
	}
	var st proposalState
	if ok && json.Unmarshal(b, &st) != nil {
		// An unreadable record is none: at worst a proposal is made
		// again on its branch, which moves the branch to the same
		// content.
		st = proposalState{}
	}
	if st.Seen == nil {
		st.Seen = map[string]map[string]time.Time{}
	}
	if st.Open == nil {
		st.Open = map[string]openProposal{}
	}
	if st.Declined == nil {
		st.Declined = map[string][]string{}
	}
	return st, nil
}

func (p *proposer) save(ctx context.Context, facts webhook.Facts, repo string, st proposalState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if facts == nil {
		p.mu.Lock()
		p.memory[repo] = b
		p.mu.Unlock()
		return nil
	}
	// The round holds the repository's lease: nothing else writes it.
	return facts.Update(ctx, proposeNS, repo, func([]byte, bool) ([]byte, bool) { return b, true })
}

// NotifyRegistry polls at once the repositories whose policy watches one
// of the pushed bundle repositories (webhook.RepositoryMatches), and
// says how many. Before the first round this process knows of none.
func (a *App) NotifyRegistry(pushed []string) int {
	p := a.prop
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for repo, watched := range p.watched {
		if slices.ContainsFunc(watched, func(w string) bool {
			return slices.ContainsFunc(pushed, func(r string) bool { return webhook.RepositoryMatches(r, w) })
		}) {
			p.kicked[repo] = true
			n++
		}
	}
	if n > 0 {
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
	return n
}

// RunProposer makes a round now and then every interval, and one for
// the repositories a registry notification names as soon as it comes,
// until ctx ends, giving the jobs (the check of each pull request it
// opened or moved) to enqueue. A round that fails is made up by the next.
func (a *App) RunProposer(ctx context.Context, enqueue func(webhook.Job)) {
	p := a.prop
	if p == nil {
		return
	}
	t := time.NewTicker(p.o.Interval)
	defer t.Stop()
	var only map[string]bool
	for {
		jobs, err := a.ProposeRound(ctx, only)
		for _, j := range jobs {
			enqueue(j)
		}
		if err != nil && ctx.Err() == nil {
			a.log.Warn("propose round incomplete", "err", err)
		}
		only = nil
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.kick:
			p.mu.Lock()
			only, p.kicked = p.kicked, map[string]bool{}
			p.mu.Unlock()
		}
	}
}

// ProposeRound polls every repository of every installation whose
// policy watches bundle repositories, or, when only is set, those
// repositories ("owner/name" lower-cased) at once, whenever they were
// last polled. It returns a KindPR job for each pull request it opened
// or moved.
func (a *App) ProposeRound(ctx context.Context, only map[string]bool) ([]webhook.Job, error) {
	if a.prop == nil {
		return nil, nil
	}
	var jobs []webhook.Job
	var errs []error
	iopts := &github.ListOptions{PerPage: 100}
	for {
		insts, resp, err := a.gh.App().Apps.ListInstallations(ctx, iopts)
		if err != nil {
			return jobs, a.fail("propose", fmt.Errorf("propose: list the App's installations: %w", err))
		}
		for _, inst := range insts {
			if inst.SuspendedAt != nil {
				continue
			}
			gh, err := a.gh.Installation(inst.GetID())
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ropts := &github.ListOptions{PerPage: 100}
			for {
				repos, rresp, err := gh.Apps.ListRepos(ctx, ropts)
				if err != nil {
					errs = append(errs, a.fail("propose", fmt.Errorf("propose: list the repositories of installation %d: %w", inst.GetID(), err)))
					break
				}
				for _, r := range repos.Repositories {
					full := strings.ToLower(r.GetFullName())
					if r.GetArchived() || only != nil && !only[full] {
						continue
					}
					js, err := a.proposeRepo(ctx, gh, inst.GetID(), r, only != nil)
					jobs = append(jobs, js...)
					if err != nil {
						a.metrics.ProposeRounds.WithLabelValues("failed").Inc()
						errs = append(errs, a.fail("propose", fmt.Errorf("propose: %s: %w", full, err)))
					}
				}
				if rresp.NextPage == 0 {
					break
				}
				ropts.Page = rresp.NextPage
			}
		}
		if resp.NextPage == 0 {
			break
		}
		iopts.Page = resp.NextPage
	}
	return jobs, errors.Join(errs...)
}

// proposeRepo makes one repository's round: forced by a notification,
// or when its last poll is an interval old.
func (a *App) proposeRepo(ctx context.Context, gh *github.Client, inst int64, r *github.Repository, forced bool) ([]webhook.Job, error) {
	p := a.prop
	full := strings.ToLower(r.GetFullName())
	owner, name := r.GetOwner().GetLogin(), r.GetName()
	token, err := a.gh.InstallationToken(ctx, inst)
	if err != nil {
		return nil, err
	}
	branch := r.GetDefaultBranch()
	src := gitcache.Source{Repo: full, URL: r.GetCloneURL(), Token: token}
	tip, err := a.cache.Branch(ctx, src, branch)
	if err != nil {
		return nil, a.gitFailed(ctx, inst, token, err)
	}
	tree, err := a.cache.Tree(full, tip)
	if err != nil {
		return nil, err
	}
	pol, findings, err := policy.Load(tree)
	if err != nil || len(findings) > 0 || len(pol.Propose) == 0 {
		// An invalid policy is the check's to report, on every pull
		// request; a repository that watches nothing has no round.
		p.mu.Lock()
		delete(p.watched, full)
		p.mu.Unlock()
		return nil, nil
	}
	var watched []string
	for _, w := range pol.Propose {
		watched = append(watched, w.Repository)
	}
	p.mu.Lock()
	p.watched[full] = watched
	p.mu.Unlock()

	now := a.now()
	key := "propose " + full
	got, _, err := a.turns.take(ctx, key, a.instance, 0, now)
	if err != nil || !got {
		// Another replica is making this round.
		return nil, err
	}
	workCtx, stop := context.WithCancel(ctx)
	defer stop()
	renewed := a.renewTurn(workCtx, key)
	defer func() {
		stop()
		<-renewed
		if _, err := a.turns.leave(context.WithoutCancel(ctx), key, a.instance, 0, a.now(), false); err != nil {
			a.log.Warn("propose: leaving the lease", "repo", full, "err", err)
		}
	}()

	st, err := p.load(ctx, a.facts, full)
	if err != nil {
		return nil, err
	}
	if !forced && now.Sub(st.Polled) < p.o.Interval*9/10 {
		return nil, nil
	}
	dir, err := a.cache.Path(full)
	if err != nil {
		return nil, err
	}
	log := a.log.With("repo", full, "base", tip)
	var jobs []webhook.Job
	var errs []error
	changed := false
	for _, w := range pol.Propose {
		res, err := propose.Run(workCtx, propose.Options{
			Repo: dir, Rev: tip, Detached: true, Packages: []string{w.Package},
			Author: a.botLogin(), Registry: p.o.Registry, Images: a.images, Renderer: a.renderer, Now: a.clock,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", w.Package, err))
			continue
		}
		for _, pr := range res.Problems {
			log.Warn("propose: nothing can be proposed", "package", w.Package, "why", pr)
		}
		for _, s := range res.Skipped {
			log.Info("propose: a tag passed over", "package", w.Package, "why", s)
		}
		j, moved, err := a.placeProposal(workCtx, gh, inst, owner, name, full, branch, tip, w.Package, res, &st, log)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", w.Package, err))
		}
		changed = changed || moved
		jobs = append(jobs, j...)
		a.noteSeen(full, w.Package, res, &st, now)
	}
	st.Polled = now
	if err := p.save(context.WithoutCancel(ctx), a.facts, full, st); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		result := "unchanged"
		if changed {
			result = "proposed"
		}
		a.metrics.ProposeRounds.WithLabelValues(result).Inc()
	}
	return jobs, errors.Join(errs...)
}

// renewTurn renews the lease every third of it until ctx ends; the
// returned channel closes when it stopped.
func (a *App) renewTurn(ctx context.Context, key string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(a.turns.lease() / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, _, err := a.turns.take(ctx, key, a.instance, 0, a.now()); err != nil && ctx.Err() == nil {
					a.log.Warn("propose: renewing the lease", "key", key, "err", err)
				}
			}
		}
	}()
	return done
}

// placeProposal makes GitHub hold what propose.Run found for one
// package: its commit on the package's branch and an open pull request
// from it, or, when nothing is left to propose, no open proposal.
func (a *App) placeProposal(ctx context.Context, gh *github.Client, inst int64, owner, name, full, base, tip, pkg string,
	res *propose.Result, st *proposalState, log interface {
		Info(string, ...any)
		Warn(string, ...any)
	}) (jobs []webhook.Job, moved bool, err error) {
	var rows []propose.Added
	for _, r := range res.Added {
		if r.Refused != "" {
			log.Warn("propose: the check refuses the proposal", "package", pkg, "version", r.Version, "why", r.Refused)
			continue
		}
		rows = append(rows, r)
	}
	open, has := st.Open[pkg]
	if has {
		// The pull request may have been merged or closed by people.
		pr, _, err := gh.PullRequests.Get(ctx, owner, name, open.PR)
		if err != nil {
			return nil, false, fmt.Errorf("read proposal #%d: %w", open.PR, err)
		}
		if pr.GetState() != "open" {
			// The App closes its own proposals itself (below) and
			// forgets them there: one closed unmerged was closed
			// by people.
			if !pr.GetMerged() {
				st.Declined[pkg] = open.Versions
				log.Info("propose: a proposal was closed unmerged; its releases are not proposed again", "package", pkg, "pr", open.PR, "versions", open.Versions)
			}
			delete(st.Open, pkg)
			has = false
		}
	}
	if len(rows) == 0 {
		if !has || len(res.Problems) > 0 {
			// Nothing new, or nothing known: a registry that could
			// not be listed closes no proposal.
			return nil, false, nil
		}
		for _, v := range open.Versions {
			if slices.ContainsFunc(res.Seen, func(s propose.Seen) bool { return s.Version == v }) {
				// Still a release the catalog lacks (not pullable
				// for now, say): the proposal stays.
				return nil, false, nil
			}
		}
		// Its releases are in the catalog by other means.
		body := fmt.Sprintf("Closed by catalogbot: %s %s is in the catalog on %s (%s) without this pull request.",
			pkg, strings.Join(open.Versions, ", "), base, tip[:min(12, len(tip))])
		if _, _, err := gh.Issues.CreateComment(ctx, owner, name, open.PR, &github.IssueComment{Body: &body}); err != nil {
			return nil, false, fmt.Errorf("comment on proposal #%d: %w", open.PR, err)
		}
		if _, _, err := gh.PullRequests.Edit(ctx, owner, name, open.PR, &github.PullRequest{State: github.String("closed")}); err != nil {
			return nil, false, fmt.Errorf("close proposal #%d: %w", open.PR, err)
		}
		log.Info("propose: closed a proposal whose releases landed otherwise", "package", pkg, "pr", open.PR)
		delete(st.Open, pkg)
		return nil, true, nil
	}
	var versions []string
	for _, r := range rows {
		versions = append(versions, r.Version)
	}
	if has && slices.Equal(open.Versions, versions) {
		return nil, false, nil
	}
	if !has && slices.Equal(st.Declined[pkg], versions) {
		return nil, false, nil
	}
	delete(st.Declined, pkg)
	msg, bodyText := rows[0].Message, rows[0].Body
	head, err := a.pushProposal(ctx, gh, owner, name, full, tip, rows[0].Commit, msg+"\n\n"+bodyText)
	if err != nil {
		return nil, false, err
	}
	branch := ProposalBranch(pkg)
	if err := setBranch(ctx, gh, owner, name, branch, head); err != nil {
		return nil, false, err
	}
	number := open.PR
	if has {
		if _, _, err := gh.PullRequests.Edit(ctx, owner, name, number, &github.PullRequest{Title: &msg, Body: &bodyText}); err != nil {
			return nil, false, fmt.Errorf("edit proposal #%d: %w", number, err)
		}
		log.Info("propose: moved a proposal to newer releases", "package", pkg, "pr", number, "versions", versions, "was", open.Versions)
	} else {
		pr, _, err := gh.PullRequests.Create(ctx, owner, name, &github.NewPullRequest{Title: &msg, Head: &branch, Base: &base, Body: &bodyText})
		if err != nil {
			return nil, false, fmt.Errorf("open the proposal of %s: %w", pkg, err)
		}
		number = pr.GetNumber()
		// The object form: GitHub's description lists it alone.
		req, err := gh.NewRequest(http.MethodPost, fmt.Sprintf("repos/%s/%s/issues/%d/labels", owner, name, number), map[string][]string{"labels": {ProposalLabel}})
		if err == nil {
			_, err = gh.Do(ctx, req, nil)
		}
		if err != nil {
			log.Warn("propose: labelling the proposal", "pr", number, "err", err)
		}
		log.Info("propose: opened a proposal", "package", pkg, "pr", number, "versions", versions)
	}
	st.Open[pkg] = openProposal{PR: number, Head: head, Versions: versions}
	jobs = append(jobs, webhook.Job{
		Key:          webhook.Key{Repo: full, PR: number, Kind: webhook.KindPR},
		Event:        "propose",
		Delivery:     fmt.Sprintf("propose-%s-%s-%d-%s", a.instance, full, number, head),
		Installation: inst,
		Received:     time.Now(),
	})
	return jobs, true, nil
}

// pushProposal writes the proposal commit (made in the cache from tip)
// through the git data API: a blob of each file it changed, a tree on
// tip's, a commit on tip. It returns GitHub's commit id.
func (a *App) pushProposal(ctx context.Context, gh *github.Client, owner, name, full, tip, commit, message string) (string, error) {
	paths, err := a.cache.ChangedPaths(full, tip, commit)
	if err != nil {
		return "", err
	}
	head, err := a.cache.Tree(full, commit)
	if err != nil {
		return "", err
	}
	baseTree, err := a.cache.TreeID(full, tip)
	if err != nil {
		return "", err
	}
	var entries []*github.TreeEntry
	for _, p := range paths {
		data, err := fs.ReadFile(head, p)
		if errors.Is(err, fs.ErrNotExist) {
			entries = append(entries, &github.TreeEntry{Path: github.String(p), Mode: github.String("100644"), Type: github.String("blob")})
			continue
		}
		if err != nil {
			return "", err
		}
		blob, _, err := gh.Git.CreateBlob(ctx, owner, name, &github.Blob{Content: github.String(base64.StdEncoding.EncodeToString(data)), Encoding: github.String("base64")})
		if err != nil {
			return "", fmt.Errorf("create the blob of %s: %w", p, err)
		}
		entries = append(entries, &github.TreeEntry{Path: github.String(p), Mode: github.String("100644"), Type: github.String("blob"), SHA: blob.SHA})
	}
	tree, _, err := gh.Git.CreateTree(ctx, owner, name, baseTree, entries)
	if err != nil {
		return "", fmt.Errorf("create the tree: %w", err)
	}
	c, _, err := gh.Git.CreateCommit(ctx, owner, name, &github.Commit{Message: &message, Tree: tree, Parents: []*github.Commit{{SHA: &tip}}}, nil)
	if err != nil {
		return "", fmt.Errorf("create the commit: %w", err)
	}
	return c.GetSHA(), nil
}

// setBranch points branch at sha, creating it, or moving it whatever it
// held: a proposal branch is the App's alone.
func setBranch(ctx context.Context, gh *github.Client, owner, name, branch, sha string) error {
	_, _, err := gh.Git.GetRef(ctx, owner, name, "heads/"+branch)
	switch {
	case statusOf(err) == http.StatusNotFound:
		_, _, err = gh.Git.CreateRef(ctx, owner, name, &github.Reference{Ref: github.String("refs/heads/" + branch), Object: &github.GitObject{SHA: &sha}})
	case err == nil:
		_, _, err = gh.Git.UpdateRef(ctx, owner, name, &github.Reference{Ref: github.String("heads/" + branch), Object: &github.GitObject{SHA: &sha}}, true)
	}
	if err != nil {
		return fmt.Errorf("set %s: %w", branch, err)
	}
	return nil
}

// noteSeen keeps when each release the catalog lacks was first seen and
// sets the missing-proposal alarm of the package: the age of the oldest
// such release no open proposal carries, once past UnplacedAfter.
func (a *App) noteSeen(full, pkg string, res *propose.Result, st *proposalState, now time.Time) {
	seen := st.Seen[pkg]
	if seen == nil {
		seen = map[string]time.Time{}
	}
	current := map[string]bool{}
	for _, s := range res.Seen {
		current[s.Version] = true
		if _, ok := seen[s.Version]; !ok {
			seen[s.Version] = now
		}
	}
	if len(res.Problems) == 0 {
		// Releases no longer seen are in the catalog (or gone).
		for v := range seen {
			if !current[v] {
				delete(seen, v)
			}
		}
	}
	st.Seen[pkg] = seen
	if len(seen) == 0 {
		delete(st.Seen, pkg)
	}
	var oldest time.Time
	for v, at := range seen {
		if slices.Contains(st.Open[pkg].Versions, v) {
			continue
		}
		if oldest.IsZero() || at.Before(oldest) {
			oldest = at
		}
	}
	if !oldest.IsZero() && now.Sub(oldest) >= a.prop.o.UnplacedAfter {
		a.metrics.BundleUnplaced.WithLabelValues(full, pkg).Set(now.Sub(oldest).Seconds())
	} else {
		a.metrics.BundleUnplaced.DeleteLabelValues(full, pkg)
	}
}

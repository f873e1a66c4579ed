package reconcile

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/publishing"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/publisher/assemble"
	"github.com/catalogbot/catalogbot/publisher/publish"
	"github.com/catalogbot/catalogbot/publisher/sign"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/gitcache"
)

// Publish results, the label values of Metrics.Publishes.
const (
	PublishPushed    = "pushed"
	PublishUnchanged = "unchanged"
	PublishFailed    = "failed"
)

// pushEvent is what publishing reads of a push payload.
type pushEvent struct {
	Ref        string `json:"ref"`
	Before     string `json:"before"`
	After      string `json:"after"`
	Deleted    bool   `json:"deleted"`
	Repository struct {
		Name          string `json:"name"`
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
		CloneURL      string `json:"clone_url"`
		Owner         struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
}

// publish publishes the catalog of a commit pushed to the default branch:
// assembled from the reference list when the repository has one, else
// taken from the catalog roots; validated; built and pushed to the image
// the policy at that commit names. The outcome is a check run on the
// commit. Jobs of one repository run one at a time and a newer push
// replaces a queued older one (the queue's key); a job whose commit is no
// longer the branch's tip is skipped, since the newer one publishes.
//
// The registry credentials of Config.Publish are used here and nowhere
// else: checking a pull request never holds them.
//
// A push that changes OWNERS files or the policy also re-checks the open
// pull requests (recheckOnRulesChange), whatever the publish does: their
// jobs are returned.
func (a *App) publish(ctx context.Context, job webhook.Job) (rechecks []webhook.Job, err error) {
	var ev pushEvent
	if err := json.Unmarshal(job.Payload, &ev); err != nil {
		return rechecks, a.fail("publish", fmt.Errorf("push %s: payload: %w", job.Delivery, err))
	}
	log := a.log.With("delivery", job.Delivery, "repo", job.Key.Repo, "sha", ev.After)
	branch, isBranch := strings.CutPrefix(ev.Ref, "refs/heads/")
	if !isBranch || branch != ev.Repository.DefaultBranch || ev.Deleted || strings.Trim(ev.After, "0") == "" {
		log.Debug("push not to the default branch; nothing to publish", "ref", ev.Ref)
		return rechecks, nil
	}
	full := ev.Repository.FullName
	owner, name, err := splitRepo(full)
	if err != nil {
		return rechecks, a.fail("publish", err)
	}
	if job.Installation == 0 {
		job.Installation = ev.Installation.ID
	}
	inst, err := a.installationOf(ctx, job, owner, name)
	if err != nil {
		return rechecks, a.fail("github", err)
	}
	gh, err := a.gh.Installation(inst)
	if err != nil {
		return rechecks, a.fail("github", err)
	}
	token, err := a.gh.InstallationToken(ctx, inst)
	if err != nil {
		return rechecks, a.fail("github", err)
	}
	src := gitcache.Source{Repo: full, URL: ev.Repository.CloneURL, Token: token}
	tip, err := a.cache.Branch(ctx, src, branch)
	if err != nil {
		return rechecks, a.gitFailed(ctx, inst, token, err)
	}
	if tip != ev.After {
		log.Info("the branch moved on since this push; the newer push publishes", "tip", tip)
		return rechecks, nil
	}
	rechecks = a.recheckOnRulesChange(ctx, gh, inst, owner, name, ev.Before, ev.After, log)
	tree, err := a.cache.Tree(full, ev.After)
	if err != nil {
		return rechecks, a.fail("git", err)
	}
	pol, findings, err := policy.Load(tree)
	if err != nil {
		return rechecks, a.fail("policy", fmt.Errorf("%s: read the policy at %s: %w", full, ev.After, err))
	}
	if len(findings) > 0 {
		out := invalidPolicyOutput(findings, review.ForPublish)
		a.metrics.Publishes.WithLabelValues(PublishFailed).Inc()
		return rechecks, a.reportPublish(ctx, gh, owner, name, ev.After, PublishCheckRunName, out)
	}
	inputs, err := publishing.Inputs(pol, tree)
	if err != nil {
		out := invalidPolicyOutput([]checks.Finding{policy.TargetsFinding(err)}, review.ForPublish)
		a.metrics.Publishes.WithLabelValues(PublishFailed).Inc()
		return rechecks, a.reportPublish(ctx, gh, owner, name, ev.After, PublishCheckRunName, out)
	}
	// Each catalog is published on its own, to its own image, and
	// reported in a check run of its own; one that fails leaves the others
	// published.
	var failed []string
	for _, in := range inputs {
		if in.Options.Image == "" {
			log.Debug("the policy names no image; nothing to publish", "catalog", in.Catalog)
			continue
		}
		start := time.Now()
		out, result := a.granted(full, inst, ev.After, in)
		if result == "" {
			out, result = a.buildAndPush(ctx, tree, pol, in, job.Key.Repo, ev.Before, ev.After)
		}
		a.metrics.Publishes.WithLabelValues(result).Inc()
		log.Info("publish", "catalog", in.Catalog, "result", result, "image", in.Options.Image, "title", out.Title, "took", time.Since(start).Round(time.Millisecond))
		if err := a.reportPublish(ctx, gh, owner, name, ev.After, PublishRunName(in.Catalog), out); err != nil {
			return rechecks, err
		}
		if result == PublishFailed {
			failed = append(failed, cmp.Or(in.Catalog, in.Options.Image)+": "+out.Title)
		}
	}
	if len(failed) > 0 {
		return rechecks, a.fail("publish", fmt.Errorf("publish %s@%s: %s", full, ev.After, strings.Join(failed, "; ")))
	}
	return rechecks, nil
}

// PublishRunName is the name of the check run that reports the publication
// of a catalog: PublishCheckRunName for the one catalog of a policy without
// a catalogs list, with the catalog's name after it otherwise.
func PublishRunName(catalog string) string {
	if catalog == "" {
		return PublishCheckRunName
	}
	return PublishCheckRunName + " (" + catalog + ")"
}

func (a *App) reportPublish(ctx context.Context, gh *github.Client, owner, name, sha, run string, out checkOutput) error {
	if err := a.writeCheckRun(ctx, gh, owner, name, sha, run, out, true); err != nil {
		return a.fail("report", err)
	}
	return nil
}

// granted refuses, before anything is built, pushed or signed, a target
// the service's configuration does not give the repository
// (policy.CheckTarget): the App's credentials and signature must never
// land on another repository's image. The result is "" when the target is
// granted.
func (a *App) granted(repo string, installation int64, sha string, in publishing.PublishTarget) (checkOutput, string) {
	err := policy.CheckTarget(a.cfg.Publish.Targets, repo, installation, in.Options.Image)
	if err == nil {
		return checkOutput{}, ""
	}
	a.log.Warn("publish target refused", "repo", repo, "sha", sha, "catalog", in.Catalog, "image", in.Options.Image, "error", err)
	return checkOutput{
		Conclusion: checks.Failure,
		Title:      "The publish target is not this repository's",
		Summary: fmt.Sprintf("The policy at %s publishes to %s, and this service does not let %s publish there:\n\n%s\n\nNothing was built, pushed or signed. Publish under the repository's own namespace, or ask the service's operator to grant the target (publish.targets in the App's configuration).\n",
			sha, checks.Code(in.Options.Image), repo, checks.Code(err.Error())),
	}, PublishFailed
}

// buildAndPush publishes one catalog through the one publish flow, with the
// source and options the policy translates to (publishing.Inputs),
// signed and attested when the policy asks for it, and reports the outcome
// as a check run output and a Publishes result.
func (a *App) buildAndPush(ctx context.Context, tree fs.FS, pol *policy.Policy, in publishing.PublishTarget, repo, before, sha string) (checkOutput, string) {
	failed := func(title, summary string, findings []checks.Finding) (checkOutput, string) {
		return checkOutput{Conclusion: checks.Failure, Title: title, Summary: summary, Findings: findings}, PublishFailed
	}
	src, opts, image := in.Source, in.Options, in.Options.Image
	signer, err := publishing.Signer(ctx, pol, a.signWith())
	if err != nil {
		return failed("Could not sign the catalog image", fmt.Sprintf("The policy at %s asks for a signed catalog image (`publish.sign: %s`), and the App cannot sign it:\n\n%s\n\nNothing was published.\n",
			sha, pol.Publish.Sign, checks.Code(err.Error())), nil)
	}
	if signer != nil {
		opts.Signer = signer
		opts.Builder = sign.Builder{ID: sign.BuilderID, Version: map[string]string{"catalogbot": strings.TrimPrefix(a.userAgent, "catalogbot/")}}
		opts.Source, opts.Approval = publishing.Provenance(pol, tree, repo, sha)
		a.recordApprovals(opts.Approval, repo, before, sha)
	}
	// Repository directories are owner/name.git, and no owner starts
	// with a dot.
	opts.CacheDir = filepath.Join(a.cache.Dir(), ".render")
	opts.InsecureRegistries = a.cfg.Publish.Insecure
	opts.Keychain = registry.Keychain(a.cfg.Publish.AuthFile)
	opts.UserAgent = a.userAgent
	res, err := publish.Publish(ctx, src, opts)
	if err != nil {
		var aerr *assemble.Error
		if errors.As(err, &aerr) {
			return failed("Could not assemble the catalog", fmt.Sprintf("Assembling the catalog at %s failed:\n\n```\n%v\n```\n", sha, err), nil)
		}
		// A registry's failure is said with its host and what to do;
		// the library's text, which prints the registry's details as
		// Go values, goes to the log.
		why := err.Error()
		if class, msg, ok := registry.Explain(err); ok {
			a.log.Warn("publish failed", "sha", sha, "image", image, "error", err)
			why = string(class) + ": " + msg
		}
		return failed("Could not publish the catalog image", fmt.Sprintf("Publishing the catalog at %s to %s failed:\n\n%s\n", sha, checks.Code(image), checks.Code(why)), nil)
	}
	switch {
	case res.ListFindings != nil:
		return failed("The reference list is invalid", "The catalog.yaml reference list has errors; nothing was published.", res.ListFindings)
	case res.Status == publish.Invalid:
		a.metrics.SetBranchInvalid(repo, true)
		a.log.Error("the published branch's catalog does not validate; nothing was published", "repo", repo, "sha", sha, "image", image)
		return failed("The catalog is invalid", fmt.Sprintf("The catalog at %s does not validate; nothing was published.\n\n%s", sha, res.Findings.OPMMessage), res.Findings.Findings)
	}
	a.metrics.SetBranchInvalid(repo, false)
	result, verb := PublishPushed, "Published"
	if res.Status == publish.Unchanged {
		result, verb = PublishUnchanged, "Unchanged"
	}
	a.published.update(repo, maxMerges, func(string, bool) (string, bool) { return sha, true })
	summary := fmt.Sprintf("The catalog at %s is `%s@%s`.\n\n| | |\n|---|---|\n| image | `%s` |\n| digest | `%s` |\n| base | `%s` |\n",
		sha, repoOf(image), res.Digest, image, res.Digest, res.Base())
	if res.Previous != "" && res.Previous != res.Digest {
		summary += fmt.Sprintf("| previous | `%s` |\n", res.Previous)
	}
	if res.Signature != "" {
		summary += fmt.Sprintf("| signature | %s, with the approval and SLSA provenance attestations |\n", res.Signature)
	}
	if v := res.Catalogd; v != nil {
		// What catalogd will serve at /api/v1/all, which every client
		// of the catalog downloads whole.
		summary += fmt.Sprintf("| catalogd view | %s in %d objects, `%s` |\n", publish.ByteSize(v.Size), v.Objects, v.Digest)
	}
	if w := res.CatalogdWarning(); w != "" {
		summary += "\n**Warning:** " + w + ".\n"
	}
	if len(res.Drift) > 0 {
		summary += "\nMoved since the last publication:\n\n"
		for _, d := range res.Drift {
			summary += fmt.Sprintf("- %s\n", d)
		}
	}
	if res.Status == publish.Unchanged {
		summary += "\nThe tag already pointed at this digest; nothing was pushed.\n"
	}
	if res.Build != nil && len(res.Build.Notes) > 0 {
		summary += "\nBuild notes:\n\n"
		for _, n := range res.Build.Notes {
			summary += fmt.Sprintf("- %s\n", n)
		}
	}
	return checkOutput{Conclusion: checks.Success, Title: fmt.Sprintf("%s %s", verb, res.Digest), Summary: summary}, result
}

// recordApprovals lists in appr the merges the App made that this
// publication of sha ships: those on the branch's first-parent line since
// the commit last published, or since the push's before when the App has
// not published the repository since it started.
func (a *App) recordApprovals(appr *sign.Approval, repo, before, sha string) {
	from, known := a.published.get(repo)
	if !known {
		from = before
	}
	commits, complete, err := a.cache.FirstParents(repo, from, sha, maxMerges)
	if err != nil {
		a.log.Warn("the commits since the last publication cannot be read", "repo", repo, "from", from, "to", sha, "error", err)
		commits, complete = []string{sha}, false
	}
	if from != "" && strings.Trim(from, "0") != "" {
		appr.Previous = &sign.Publication{Commit: from}
	}
	review.RecordApprovals(appr, commits, complete && known, func(c string) (review.MergeRecord, bool) {
		return a.merges.get(repo + "@" + c)
	})
}

// repoOf strips the tag from an image reference.
func repoOf(ref string) string {
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[:i]
	}
	return ref
}

// signWith is what the App signs with: its key, its Fulcio and its
// transparency log, from its configuration.
func (a *App) signWith() publishing.SignWith {
	w := publishing.SignWith{Key: a.cfg.Publish.SignKey, Keyless: sign.KeylessOptions{FulcioURL: a.cfg.Publish.FulcioURL}}
	if a.cfg.Publish.TlogUpload {
		w.Log = &sign.Rekor{URL: a.cfg.Publish.RekorURL}
		if w.Log.URL == "" {
			w.Log.URL = sign.DefaultRekorURL
		}
	}
	return w
}

package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/review"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/assemble"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/catalogyaml"
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
// pull requests (recheckOnRulesChange), whatever the publish does.
func (a *App) publish(ctx context.Context, job Job) error {
	var ev pushEvent
	if err := json.Unmarshal(job.Payload, &ev); err != nil {
		return a.fail("publish", fmt.Errorf("push %s: payload: %w", job.Delivery, err))
	}
	log := a.log.With("delivery", job.Delivery, "repo", job.Key.Repo, "sha", ev.After)
	branch, isBranch := strings.CutPrefix(ev.Ref, "refs/heads/")
	if !isBranch || branch != ev.Repository.DefaultBranch || ev.Deleted || strings.Trim(ev.After, "0") == "" {
		log.Debug("push not to the default branch; nothing to publish", "ref", ev.Ref)
		return nil
	}
	full := ev.Repository.FullName
	owner, name, err := splitRepo(full)
	if err != nil {
		return a.fail("publish", err)
	}
	if job.Installation == 0 {
		job.Installation = ev.Installation.ID
	}
	inst, err := a.installationOf(ctx, job, owner, name)
	if err != nil {
		return a.fail("github", err)
	}
	gh, err := a.gh.Installation(inst)
	if err != nil {
		return a.fail("github", err)
	}
	token, err := a.gh.InstallationToken(ctx, inst)
	if err != nil {
		return a.fail("github", err)
	}
	src := gitcache.Source{Repo: full, URL: ev.Repository.CloneURL, Token: token}
	tip, err := a.cache.Branch(ctx, src, branch)
	if err != nil {
		return a.fail("git", err)
	}
	if tip != ev.After {
		log.Info("the branch moved on since this push; the newer push publishes", "tip", tip)
		return nil
	}
	a.recheckOnRulesChange(ctx, gh, inst, owner, name, ev.Before, ev.After, log)
	tree, err := a.cache.Tree(full, ev.After)
	if err != nil {
		return a.fail("git", err)
	}
	pol, findings, err := policy.Load(tree)
	if err != nil {
		return a.fail("policy", fmt.Errorf("%s: read the policy at %s: %w", full, ev.After, err))
	}
	if len(findings) > 0 {
		out := invalidPolicyOutput(findings, review.ForPublish)
		a.metrics.Publishes.WithLabelValues(PublishFailed).Inc()
		return a.reportPublish(ctx, gh, owner, name, ev.After, out)
	}
	if pol.Publish.Image == "" {
		log.Debug("the policy names no image; nothing to publish")
		return nil
	}

	start := time.Now()
	out, result := a.buildAndPush(ctx, tree, pol, ev.After)
	a.metrics.Publishes.WithLabelValues(result).Inc()
	log.Info("publish", "result", result, "image", pol.Publish.Image, "title", out.Title, "took", time.Since(start).Round(time.Millisecond))
	if err := a.reportPublish(ctx, gh, owner, name, ev.After, out); err != nil {
		return err
	}
	if result == PublishFailed {
		return a.fail("publish", fmt.Errorf("publish %s@%s: %s", full, ev.After, out.Title))
	}
	return nil
}

func (a *App) reportPublish(ctx context.Context, gh *github.Client, owner, name, sha string, out checkOutput) error {
	if err := a.writeCheckRun(ctx, gh, owner, name, sha, PublishCheckRunName, out, true); err != nil {
		return a.fail("report", err)
	}
	return nil
}

// buildAndPush does the publishing proper, reporting the outcome as a
// check run output and a Publishes result.
func (a *App) buildAndPush(ctx context.Context, tree fs.FS, pol *policy.Policy, sha string) (checkOutput, string) {
	failed := func(title, summary string, findings []checks.Finding) (checkOutput, string) {
		return checkOutput{Conclusion: checks.Failure, Title: title, Summary: summary, Findings: findings}, PublishFailed
	}
	work, err := os.MkdirTemp("", "catalogbot-publish-")
	if err != nil {
		return failed("Could not publish", fmt.Sprintf("Creating a work directory failed: %v", err), nil)
	}
	defer os.RemoveAll(work)

	keychain := registry.Keychain(a.cfg.Publish.AuthFile)
	dir, findings, err := a.catalogDir(ctx, tree, pol, work, keychain)
	if err != nil {
		return failed("Could not assemble the catalog", fmt.Sprintf("Assembling the catalog at %s failed:\n\n```\n%v\n```\n", sha, err), findings)
	}
	if len(findings) > 0 {
		return failed("The reference list is invalid", "The catalog.yaml reference list has errors; nothing was published.", findings)
	}

	res, err := fbc.Validate(ctx, os.DirFS(dir), fbc.Options{})
	if err != nil {
		return failed("Could not validate the catalog", err.Error(), nil)
	}
	if !res.Valid() {
		return failed("The catalog is invalid", fmt.Sprintf("The catalog at %s does not validate; nothing was published.\n\n%s", sha, res.OPMMessage), res.Findings)
	}

	ropts := []remote.Option{remote.WithAuthFromKeychain(keychain), remote.WithUserAgent("catalogbot")}
	img, err := build.Build(ctx, dir, build.Options{
		Base:      pol.Publish.Base,
		Platforms: pol.Publish.Platforms,
		Insecure:  a.cfg.Publish.Insecure,
		Remote:    ropts,
	})
	if err != nil {
		return failed("Could not build the catalog image", fmt.Sprintf("Building the catalog image of %s failed:\n\n```\n%v\n```\n", sha, err), nil)
	}
	pushed, err := build.Push(ctx, img, pol.Publish.Image, build.PushOptions{Insecure: a.cfg.Publish.Insecure, Remote: ropts})
	if err != nil {
		return failed("Could not push the catalog image", fmt.Sprintf("Pushing to `%s` failed:\n\n```\n%v\n```\n", pol.Publish.Image, err), nil)
	}
	result, verb := PublishPushed, "Published"
	if pushed.Unchanged {
		result, verb = PublishUnchanged, "Unchanged"
	}
	summary := fmt.Sprintf("The catalog at %s is `%s@%s`.\n\n| | |\n|---|---|\n| image | `%s` |\n| digest | `%s` |\n| base | `%s` |\n",
		sha, repoOf(pol.Publish.Image), pushed.Digest, pol.Publish.Image, pushed.Digest, pol.Publish.Base)
	if pushed.Unchanged {
		summary += "\nThe tag already pointed at this digest; nothing was pushed.\n"
	}
	return checkOutput{Conclusion: checks.Success, Title: fmt.Sprintf("%s %s", verb, pushed.Digest), Summary: summary}, result
}

// repoOf strips the tag from an image reference.
func repoOf(ref string) string {
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[:i]
	}
	return ref
}

// catalogDir writes the catalog to publish under work and returns its
// directory: assembled from the reference list when the repository has one
// (the policy's, or catalog.yaml at the root), else the catalog roots'
// packages gathered in one directory. Findings are the reference list's.
func (a *App) catalogDir(ctx context.Context, tree fs.FS, pol *policy.Policy, work string, keychain authn.Keychain) (string, []checks.Finding, error) {
	list := pol.Catalog.ReferenceList
	if list == "" {
		if _, err := fs.Stat(tree, "catalog.yaml"); err == nil {
			list = "catalog.yaml"
		}
	}
	if list != "" {
		data, err := fs.ReadFile(tree, list)
		if err == nil {
			f, findings := catalogyaml.Parse(list, data)
			if len(findings) > 0 {
				return "", findings, nil
			}
			asm, err := assemble.New(assemble.Options{
				// Repository directories are owner/name.git, and no
				// owner starts with a dot.
				CacheDir:           filepath.Join(a.cache.Dir(), ".render"),
				InsecureRegistries: a.cfg.Publish.Insecure,
				Keychain:           keychain,
			})
			if err != nil {
				return "", nil, err
			}
			res, err := asm.Assemble(ctx, f, filepath.Join(work, "assembled"))
			if err != nil {
				return "", nil, err
			}
			return res.Dir, nil, nil
		}
		if pol.Catalog.ReferenceList != "" || !errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("read %s: %w", list, err)
		}
	}

	out := filepath.Join(work, "catalog")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", nil, err
	}
	found := false
	for _, root := range pol.Catalog.Roots {
		info, err := fs.Stat(tree, root)
		if err != nil || !info.IsDir() {
			continue
		}
		found = true
		if err := copyTree(tree, root, out); err != nil {
			return "", nil, fmt.Errorf("write the catalog root %s: %w", root, err)
		}
	}
	if !found {
		return "", nil, fmt.Errorf("no catalog root of the policy (%s) exists", strings.Join(pol.Catalog.Roots, ", "))
	}
	return out, nil, nil
}

// copyTree writes the regular files under root in fsys to dir. Only data
// is written: modes are fixed, links were resolved by the tree.
func copyTree(fsys fs.FS, root, dir string) error {
	return fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if root == "." {
			rel = p
		}
		if rel == "." || rel == "" {
			return nil
		}
		if strings.HasPrefix(path.Base(p), ".") && root == "." {
			// The repository's own dot files (.catalogbot.yaml,
			// .github) are not catalog content.
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			// A link inside the tree reads as its target; one to a
			// directory is not followed (WalkDir would not either).
			info, err := fs.Stat(fsys, p)
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/fbcreport"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/publishing"
	"github.com/catalogbot/catalogbot/publisher/assemble"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/publish"
)

// publishFlags are the command line of publish.
type publishFlags struct {
	catalog   string
	config    string
	repo      string
	rev       string
	image     string
	base      string
	opmImage  string
	platforms []string
	insecure  []string
	refs      map[string]string
	sign      signFlags
	timeout   time.Duration
	// set are the build flags given on the command line, which override
	// the policy's publish section with --repo.
	set map[string]bool
}

func newPublishCmd(a *app) *cobra.Command {
	f := publishFlags{base: build.BaseOPM, opmImage: build.DefaultOPMImage}
	cmd := &cobra.Command{
		Use:   "publish (--catalog DIR | --config CATALOG_YAML) --image REF | publish --repo DIR [--rev REV] [--catalog NAME]",
		Short: "Build the catalog image and push it, without a container daemon",
		Long: `Validate the File-Based Catalog in DIR, build its catalog image and push it
to REF, a fully qualified registry reference (its registry host has a dot
or a port, or is localhost), or to oci:LAYOUT_DIR[:TAG], an OCI image
layout directory (created if missing; the tag defaults to latest). With
--config, the catalog is first assembled from a catalog.yaml reference list
and the digest of every reference is recorded, as rebuild does. With
--repo, the repository DIR is published as its policy (.catalogbot.yaml)
says, exactly as the GitHub App publishes a push to the default branch:
its reference list when it has one, else every catalog of the policy from
the roots the pull request check validated as that catalog, each to its
own publish target, on the policy's publish.base, opmImage and platforms.
--rev publishes the commit REV of the repository rather than its work
tree; --catalog NAME publishes that one catalog of the policy. --image,
--base, --opm-image and --platform, when given, take the place of the
policy's; --image only where one catalog is published.
--image, --base, --opm-image and --platform (a platform Go knows, such as
linux/amd64 or linux/arm64/v8) are checked before anything is fetched.

Registry credentials are found as container tools find them, in this
order: $REGISTRY_AUTH_FILE, the containers auth.json files
($XDG_RUNTIME_DIR/containers/auth.json, then
${XDG_CONFIG_HOME:-~/.config}/containers/auth.json), then docker's
config.json in $DOCKER_CONFIG or ~/.docker with its credHelpers and
credsStore.

The image is the base plus one /configs layer holding the catalog and the
label operators.operatorframework.io.index.configs.v1=/configs. Bases
(--base):
  opm      the opm image (--opm-image), with ENTRYPOINT ["/bin/opm"] and
           CMD ["serve","/configs","--cache-dir=/tmp/cache"], for OLM v0;
           the serve cache is built into the image by the base's own opm
           where this host can run it, else the command also gets
           --cache-enforce-integrity=false
  scratch  nothing but the catalog and the label, for OLM v1 catalogd
  IMAGE    any other image reference
A multi-platform base gives one image per platform (all of them, or those
named with --platform) and an index over them.

The build is reproducible: file times, owners, modes and order are fixed,
and so is the image's created time (the Unix epoch, or SOURCE_DATE_EPOCH),
so the same catalog on the same base digest gives the same digest. The
image is annotated with the base it was built on and with the reference
digests given with --reference-digest. The base is logged as name@digest
on every run: pin it (--opm-image IMAGE@sha256:...) for builds that must
not move when opm releases.

Blobs and the manifest are pushed before the tag moves. When the tag
already points at the digest, nothing is pushed and the result is
"unchanged". An invalid catalog is never published.

With --sign-key FILE (a cosign private key, its password in
$COSIGN_PASSWORD) or --sign-keyless (GitHub Actions: a Fulcio certificate
for the workflow's OIDC identity), or with --repo when the policy's
publish.sign asks for it, the pushed digest is signed and gets two
attestations, the approval record and SLSA provenance, stored as cosign
stores them (the sha256-<hex>.sig and .att tags); a digest signed by the
same signer already gets nothing new. Each signature and attestation is
uploaded to the Rekor transparency log --rekor-url, as cosign does, and
the log's entry kept beside it (--tlog-upload=false uploads nothing; then
verifiers need --insecure-ignore-tlog). catalogbot verify and cosign
verify check them. A policy that asks for a signature that cannot be made
fails before anything is pushed; a signature or upload that fails leaves
the tag where it was.

Output: one "drift: ..." line per input that moved since the image at
the target was built (the base; the references too when they are
recorded), "signature: signed" or "signature: already signed" when
signing, then the digest and "published" or "unchanged"; on stderr a
log line with the image, the digest and the resolved base. On a terminal,
a registry request that has waited more than two seconds is shown on
stderr until it is answered or times out (30 s without an answer).
The whole run has a deadline, --timeout (15m): a registry that accepts
connections and never answers ends it there, whatever the number of
requests it holds up; the tag moves last, so a run cut short leaves the
target as it was.

Exit status: 0 published or unchanged, 1 the catalog is invalid (its
findings are printed), a reference could not be rendered, or a registry
refused access ("unauthorized", the registry named), 2 usage, other
registry or I/O error, the deadline passed, 130 interrupted (nothing was
pushed or written).`,
		Example: `  catalogbot publish --catalog catalog --image quay.io/example/catalog:latest
  catalogbot publish --catalog catalog --image oci:out:v1 --base scratch
  catalogbot publish --catalog catalog --image localhost:5000/catalog:v1 --platform linux/amd64 --platform linux/arm64
  catalogbot publish --repo .
  catalogbot publish --repo . --rev origin/main --catalog v4.17`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd.CommandPath(), "publish takes no arguments, got %q; name the catalog with --catalog", args[0])
			}
			if f.rev != "" && f.repo == "" {
				return usageErrorf(cmd.CommandPath(), "--rev is for --repo")
			}
			if f.repo != "" {
				if f.config != "" {
					return usageErrorf(cmd.CommandPath(), "publish takes one of --catalog, --config and --repo; with --repo, --catalog names one of the policy's catalogs")
				}
				if len(f.refs) > 0 {
					return usageErrorf(cmd.CommandPath(), "--reference-digest is for --catalog; a repository's catalog.yaml records the digests its references resolve to")
				}
				f.set = map[string]bool{}
				for _, name := range []string{"image", "base", "opm-image", "platform"} {
					f.set[name] = cmd.Flags().Changed(name)
				}
			} else if (f.catalog == "") == (f.config == "") || f.image == "" {
				return usageErrorf(cmd.CommandPath(), "publish needs --image and one of --catalog and --config, or --repo")
			}
			if err := f.sign.check(cmd.CommandPath()); err != nil {
				return err
			}
			return checkBuildFlags(cmd.CommandPath(), f.image, f.base, f.opmImage, f.platforms, f.insecure)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer a.showWaiting()()
			return a.runPublish(cmd.Context(), cmd.CommandPath(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.catalog, "catalog", "", "the catalog `DIR` to publish; with --repo, the name of the one catalog of the policy to publish")
	fl.StringVar(&f.config, "config", "", "assemble the catalog from this catalog.yaml reference list (`CATALOG_YAML`) instead")
	fl.StringVar(&f.repo, "repo", "", "publish the repository `DIR` as its policy says")
	fl.StringVar(&f.rev, "rev", "", "with --repo, publish this commit of the repository rather than its work tree")
	fl.StringVar(&f.image, "image", "", "where to publish: an image `REF`erence or oci:LAYOUT_DIR[:TAG]")
	fl.StringVar(&f.base, "base", f.base, "base image: opm, scratch or an image reference")
	fl.StringVar(&f.opmImage, "opm-image", f.opmImage, "the image --base opm stands for; pin it by digest for builds that must not move")
	fl.StringArrayVar(&f.platforms, "platform", nil, "a platform (os/arch[/variant]) to build (repeatable; default: all of the base's)")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, insecureUsage)
	fl.DurationVar(&f.timeout, "timeout", publish.DefaultDeadline, "the deadline of the whole publish, assembly and push included")
	fl.StringToStringVar(&f.refs, "reference-digest", nil,
		"record REF=DIGEST in the image's io.catalogbot.references annotation, to tell later when REF has moved (repeatable)")
	f.sign.register(fl)
	return cmd
}

func (a *app) runPublish(ctx context.Context, cmdPath string, f publishFlags) error {
	epoch, err := sourceDateEpoch()
	if err != nil {
		return usageErrorf(cmdPath, "%v", err)
	}
	var src publish.Source
	opts := publish.Options{
		Image: f.image,
		Build: build.Options{
			Base:       f.base,
			OPMImage:   f.opmImage,
			Platforms:  f.platforms,
			References: f.refs,
		},
	}
	what, dir, mode := f.catalog, f.catalog, f.sign.mode()
	var pol *policy.Policy
	switch {
	case f.repo != "":
		return a.publishRepo(ctx, cmdPath, f, epoch)
	case f.config != "":
		if len(f.refs) > 0 {
			return usageErrorf(cmdPath, "--reference-digest is for --catalog; a catalog.yaml records the digests its references resolve to")
		}
		file, err := a.readCatalogYAML(f.config)
		if err != nil {
			return err
		}
		src.List, what, dir = file, "the catalog assembled from "+f.config, f.config
	default:
		info, err := os.Stat(f.catalog)
		if err != nil {
			return err
		}
		if !info.IsDir() {
			return fmt.Errorf("%q is not a directory", f.catalog)
		}
		src.Dir = f.catalog
	}

	start := time.Now()
	opts.Build.Epoch = epoch
	opts.InsecureRegistries = f.insecure
	opts.Keychain = registry.DefaultKeychain()
	opts.UserAgent = a.userAgent()
	opts.Validate = a.validate
	opts.Progress = assemble.LogProgress(a.stderr)
	if err := a.signOptions(ctx, f.sign, mode, pol, src.Tree, dir, "", &opts); err != nil {
		return err
	}
	opts.Deadline = f.timeout
	res, err := publish.Publish(ctx, src, opts)
	if err != nil {
		return a.publishError(ctx, err, false)
	}
	return a.reportPublish(res, what, opts.Image, start)
}

// publishRepo publishes the catalogs of the repository f.repo as its
// policy says, translated as the App translates it
// (publishing.Inputs), one after another. Every catalog is
// tried; the outcome is the worst of them.
func (a *app) publishRepo(ctx context.Context, cmdPath string, f publishFlags, epoch time.Time) error {
	pol, tree, inputs, err := a.repoPublishInputs(cmdPath, f)
	if err != nil {
		return err
	}
	mode := f.sign.mode()
	if mode == "" {
		mode = pol.Publish.Sign
	}
	var worst error
	for _, in := range inputs {
		what := "the catalog of " + f.repo
		if in.Catalog != "" {
			what = "catalog " + in.Catalog + " of " + f.repo
		}
		start := time.Now()
		opts := in.Options
		opts.Build.Epoch = epoch
		opts.InsecureRegistries = f.insecure
		opts.Keychain = registry.DefaultKeychain()
		opts.UserAgent = a.userAgent()
		opts.Validate = a.validate
		opts.Progress = assemble.LogProgress(a.stderr)
		opts.Deadline = f.timeout
		if err := a.signOptions(ctx, f.sign, mode, pol, tree, f.repo, f.rev, &opts); err != nil {
			return err
		}
		if in.Catalog != "" {
			fmt.Fprintf(a.stdout, "%s: %s\n", in.Catalog, opts.Image)
		}
		res, err := publish.Publish(ctx, in.Source, opts)
		if err == nil {
			err = a.reportPublish(res, what, opts.Image, start)
		} else {
			err = a.publishError(ctx, err, false)
		}
		if ctx.Err() != nil {
			return err
		}
		if err != nil && (worst == nil || errors.Is(worst, errInvalid)) {
			worst = err
		}
	}
	return worst
}

// repoPublishInputs reads the policy of the repository f.repo, at f.rev
// or as its work tree is, and translates it as the App does
// (publishing.Inputs); the build flags given on the command
// line take the place of the policy's.
func (a *app) repoPublishInputs(cmdPath string, f publishFlags) (*policy.Policy, fs.FS, []publishing.PublishTarget, error) {
	tree, err := openTree(f.repo, f.rev)
	if err != nil {
		return nil, nil, nil, err
	}
	pol, err := a.loadRepoPolicy(f.repo, tree, "not published")
	if err != nil {
		return nil, nil, nil, err
	}
	all, err := publishing.Inputs(pol, tree)
	if err != nil {
		fmt.Fprintln(a.stderr, policyError(f.repo, err))
		return nil, nil, nil, errInvalid
	}
	var inputs []publishing.PublishTarget
	var names []string
	for _, in := range all {
		names = append(names, in.Catalog)
		if f.catalog == "" || in.Catalog == f.catalog {
			inputs = append(inputs, in)
		}
	}
	if f.catalog != "" && len(inputs) == 0 {
		return nil, nil, nil, usageErrorf(cmdPath, "the policy of %s has no catalog %q; it has %s", f.repo, f.catalog, strings.Join(names, ", "))
	}
	if f.set["image"] && len(inputs) > 1 {
		return nil, nil, nil, usageErrorf(cmdPath, "--image names one image, and the policy of %s publishes %d catalogs; pick one with --catalog", f.repo, len(inputs))
	}
	published := inputs[:0]
	for _, in := range inputs {
		if f.set["image"] {
			in.Options.Image = f.image
		}
		if f.set["base"] {
			in.Options.Build.Base = f.base
		}
		if f.set["opm-image"] {
			in.Options.Build.OPMImage = f.opmImage
		}
		if f.set["platform"] {
			in.Options.Build.Platforms = f.platforms
		}
		if in.Options.Image != "" {
			published = append(published, in)
		}
	}
	if len(published) == 0 {
		return nil, nil, nil, usageErrorf(cmdPath, "the policy of %s names no publish.image; give --image", f.repo)
	}
	return pol, tree, published, nil
}

// publishError is what publish and rebuild make of a failed publish: a
// reference that could not be rendered or a registry that refused the
// credentials are the user's to fix, exit status 1, like an invalid
// catalog; anything else kept the command from a verdict. For rebuild
// (scheduled), what a later run may not meet (a registry down, slow or
// rate limited, the deadline) is a *retryError, so that the scheduler can
// tell it from what needs a person.
func (a *app) publishError(ctx context.Context, err error, scheduled bool) error {
	retry := func(err error) error {
		if scheduled {
			return &retryError{err: err}
		}
		return err
	}
	var de *publish.DeadlineError
	if errors.As(err, &de) {
		a.log.Debug("publish failed", "error", err)
		msg := fmt.Sprintf("publish: did not finish within its deadline of %s (--timeout)", de.Deadline)
		if class, what, ok := registry.Explain(de.Err); ok {
			msg += fmt.Sprintf("; it was waiting on %s (%s)", what, class)
		}
		return retry(&explainedError{msg: msg, err: err})
	}
	var aerr *assemble.Error
	if errors.As(err, &aerr) && !errors.Is(ctx.Err(), context.Canceled) {
		a.logFailures(aerr)
		if scheduled && transient(aerr) {
			return &retryError{err: err}
		}
		fmt.Fprintf(a.stderr, "catalogbot: %v\n", err)
		return errInvalid
	}
	// A registry's failure is said with its host and what to do; the
	// library's text (which prints the registry's details as Go values)
	// goes to the debug log.
	if class, msg, ok := registry.Explain(err); ok && ctx.Err() == nil {
		a.log.Debug("publish failed", "error", err)
		if class == registry.ClassUnauthorized {
			fmt.Fprintf(a.stderr, "catalogbot: publish: %s: %s\n", class, msg)
			return errInvalid
		}
		explained := &explainedError{msg: fmt.Sprintf("publish: %s: %s", class, msg), err: err}
		if class == registry.ClassTransport || class == registry.ClassRateLimited {
			return retry(explained)
		}
		return explained
	}
	return err
}

// transient reports whether every reference of err failed in a way a
// later run may not meet: its registry could not be reached, timed out or
// rate limited.
func transient(err *assemble.Error) bool {
	for _, f := range err.Failures {
		if f.Class != registry.ClassTransport && f.Class != registry.ClassRateLimited {
			return false
		}
	}
	return len(err.Failures) > 0
}

// explainedError shows msg in place of err's own text, which is logged;
// err stays in the chain for errors.Is and errors.As.
type explainedError struct {
	msg string
	err error
}

func (e *explainedError) Error() string { return e.msg }
func (e *explainedError) Unwrap() error { return e.err }

// reportPublish prints the outcome of a publish: the findings of an
// invalid catalog, else the drift, a log line naming the resolved base,
// and the digest with its status.
func (a *app) reportPublish(res *publish.Result, what, image string, start time.Time) error {
	if res.Status == publish.Invalid {
		if len(res.ListFindings) > 0 {
			for _, fd := range res.ListFindings {
				fmt.Fprintf(a.stderr, "%s:%d: %s [%s]\n", fd.File, fd.Line, fd.Message, fd.Rule)
			}
		} else if err := fbcreport.Write(a.stdout, checks.FormatText, res.Findings, fbcreport.Options{Version: a.version}); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "catalogbot: %s is invalid; not published\n", what)
		return errInvalid
	}
	for _, d := range res.Drift {
		fmt.Fprintf(a.stdout, "drift: %s\n", d)
	}
	// What the build decided per platform, such as an opm image whose
	// serve cache could not be built here and that starts with the
	// integrity check off: the user must learn it from the publish, not
	// from a pod that starts slowly.
	if res.Build != nil {
		for _, n := range res.Build.Notes {
			fmt.Fprintf(a.stderr, "catalogbot: %s\n", n)
		}
	}
	// The base is named with the digest it resolved to on every run, so
	// that an unpinned base (the default opm image is :latest) is visible
	// and can be pinned.
	// It also names what every cluster's catalogd will serve, so that its
	// size is seen at publish time rather than as a client's timeout.
	attrs := []any{"image", image, "digest", res.Digest, "previous", res.Previous,
		"base", res.Base(), "drift", len(res.Drift), "took", time.Since(start).Round(time.Millisecond)}
	if v := res.Catalogd; v != nil {
		attrs = append(attrs, "catalogd_bytes", v.Size, "catalogd_objects", v.Objects, "catalogd_digest", v.Digest)
	}
	a.log.Info(string(res.Status), attrs...)
	if res.Signature != "" {
		fmt.Fprintf(a.stdout, "signature: %s\n", res.Signature)
	}
	if w := res.CatalogdWarning(); w != "" {
		fmt.Fprintf(a.stderr, "catalogbot: warning: %s\n", w)
	}
	fmt.Fprintf(a.stdout, "%s %s\n", res.Digest, res.Status)
	return nil
}

// readCatalogYAML reads and parses a catalog.yaml, printing its findings.
func (a *app) readCatalogYAML(path string) (*catalogyaml.File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	file, findings := catalogyaml.Parse(filepath.ToSlash(path), data)
	if len(findings) > 0 {
		for _, fd := range findings {
			fmt.Fprintf(a.stderr, "%s:%d: %s [%s]\n", fd.File, fd.Line, fd.Message, fd.Rule)
		}
		return nil, errInvalid
	}
	return file, nil
}

// sourceDateEpoch is the time SOURCE_DATE_EPOCH sets, the convention of
// reproducible builds, or the zero time (the Unix epoch) when unset.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("invalid SOURCE_DATE_EPOCH %q: want seconds since the Unix epoch", s)
	}
	return time.Unix(n, 0), nil
}

package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/platform"
	"github.com/catalogbot/catalogbot/checks/reference"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/build"
)

// The checks below run in the commands' Args, before RunE: a command line
// that cannot work is refused as a usage error (exit 2) before any registry
// or file is touched. The grammars are the libraries': render's for image
// references, checks/platform's for platforms.

// qualifiedHint is the fix for a reference that is not fully qualified.
const qualifiedHint = "write the registry host too (a name with a dot or a port, or localhost), such as quay.io/example/catalog:v1 or localhost:5000/catalog:v1"

// hintFor is the fix for a reference that reference.CheckQualified refused.
func hintFor(err error) string {
	if errors.Is(err, reference.ErrNameNotCanonical) {
		return qualifiedHint
	}
	return "write a reference such as quay.io/example/catalog:v1 (lowercase repository, tag or @sha256:digest)"
}

// checkImageFlag checks an --image target by the grammar the policy's
// publish targets are read with (build.ParseTarget): an OCI layout
// (oci:DIR[:TAG]) or a fully qualified image reference.
func checkImageFlag(cmdPath, flag, s string) error {
	if s == "" {
		return nil
	}
	if _, err := build.ParseTarget(s); err != nil {
		hint := ""
		if !strings.HasPrefix(s, build.LayoutPrefix) {
			hint = ", or oci:DIR[:TAG] for an OCI image layout"
		}
		return usageErrorf(cmdPath, "invalid %s %q: %v%s", flag, s, err, hint)
	}
	return nil
}

// checkBaseFlag checks a --base: the keywords opm and scratch, or a fully
// qualified image reference.
func checkBaseFlag(cmdPath, flag, s string) error {
	if s == "" || s == build.BaseOPM || s == build.BaseScratch {
		return nil
	}
	if err := reference.CheckQualified(s); err != nil {
		return usageErrorf(cmdPath, "invalid %s %q: not %s, %s or an image reference (%v); %s", flag, s, build.BaseOPM, build.BaseScratch, err, hintFor(err))
	}
	return nil
}

// checkRefFlag checks a flag that takes only a fully qualified image
// reference, such as --opm-image.
func checkRefFlag(cmdPath, flag, s string) error {
	if s == "" {
		return nil
	}
	if err := reference.CheckQualified(s); err != nil {
		return usageErrorf(cmdPath, "invalid %s %q: %v; %s", flag, s, err, hintFor(err))
	}
	return nil
}

// checkPlatformFlags checks every --platform against Go's known platforms.
func checkPlatformFlags(cmdPath string, specs []string) error {
	if _, err := platform.ParseList(specs); err != nil {
		return usageErrorf(cmdPath, "invalid --platform: %v", err)
	}
	return nil
}

// firstError is the first non-nil error, for running several flag checks
// in order.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// deprecatedFlag tells the user, on stderr, that a flag kept for old
// command lines has a new name. pflag's own notice goes to stdout, which
// scripts parse.
func deprecatedFlag(a *app, cmd *cobra.Command, old, instead string) {
	if cmd.Flags().Changed(old) {
		fmt.Fprintf(a.stderr, "catalogbot: --%s is deprecated; %s\n", old, instead)
	}
}

// insecureUsage is --insecure-registry's help wherever a registry is
// reached over plain HTTP on request.
const insecureUsage = "reach this registry `HOST`[:PORT] over plain HTTP (repeatable)"

// checkInsecureFlags checks every --insecure-registry is a host[:port]: a
// scheme or a path would never match a registry and leave it on HTTPS
// without a word.
func checkInsecureFlags(cmdPath string, hosts []string) error {
	for _, h := range hosts {
		if h == "" || strings.Contains(h, "/") || reference.CheckQualified(h+"/x:v") != nil {
			return usageErrorf(cmdPath, "invalid --insecure-registry %q: want a registry HOST or HOST:PORT, without scheme or path, such as localhost:5000", h)
		}
	}
	return nil
}

// checkBuildFlags checks the flags publish and rebuild share, where the
// image goes and what it is built on, before anything is fetched.
func checkBuildFlags(cmdPath, image, base, opmImage string, platforms, insecure []string) error {
	return firstError(
		checkImageFlag(cmdPath, "--image", image),
		checkBaseFlag(cmdPath, "--base", base),
		checkRefFlag(cmdPath, "--opm-image", opmImage),
		checkPlatformFlags(cmdPath, platforms),
		checkInsecureFlags(cmdPath, insecure))
}

// policyError is the line that says what is wrong with the catalogs of the
// policy in the repository dir: the file, the line when known, the
// message.
func policyError(dir string, err error) string {
	f := policy.TargetsFinding(err)
	at := filepath.Join(dir, f.File)
	if f.Line > 0 {
		at += ":" + strconv.Itoa(f.Line)
	}
	return at + ": " + checks.VisibleLine(f.Message)
}

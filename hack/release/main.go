// Command release holds the steps of catalogbot's release that goreleaser
// does not: a loopback registry with a base image for an offline local
// release, the local variant of .goreleaser.yaml that points at it, the
// image digests of a dist directory, the comparison of two dist
// directories, and the rewrite of action.yml's image to a released digest.
// The Makefile (release-snapshot, release-check) and the release workflow
// (.github/workflows/release.yml) call it; nothing in the product imports
// it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

const usage = `usage: go run ./hack/release COMMAND [flags]

commands:
  base        build the local base image, serve it from a loopback registry
  config      write the local variant of .goreleaser.yaml
  digests     print the image digests a release wrote to DIST/artifacts.json
  compare     compare the binaries, archives and image digests of two dist directories
  pin         point action.yml's runs.image at a released image digest
  pin-deploy  point deploy/'s service image at the released image digest
`

// releasedFlags defines the -image, -dist and -id flags that name a
// released image on fs, the kos entry id defaulting to id; once fs is
// parsed, the returned function gives the image, repository@sha256:digest.
func releasedFlags(fs *flag.FlagSet, id, what string) func() (string, error) {
	image := fs.String("image", "", "the released image, repository@sha256:digest")
	dist := fs.String("dist", "", "take the image from this dist directory's artifacts.json instead of -image")
	kos := fs.String("id", id, "with -dist, the id of the kos entry that built "+what)
	return func() (string, error) {
		if *dist != "" {
			return imageOf(*dist, *kos)
		}
		if *image == "" {
			return "", errors.New("needs -image or -dist")
		}
		return *image, nil
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("no command\n" + strings.TrimSuffix(usage, "\n"))
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	switch args[0] {
	case "base":
		layout := fs.String("layout", "bin/release/base", "directory of the base image's OCI layout")
		ca := fs.String("ca", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to put in the base image")
		env := fs.String("env", "bin/release/registry.env", "file to write the registry and base references to")
		addr := fs.String("addr", "127.0.0.1:5055", "loopback address to serve the registry on; fixed, because the images record their base's reference, host and port included")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return serveBase(ctx, *layout, *ca, *addr, *env, stdout)
	case "config":
		in := fs.String("in", ".goreleaser.yaml", "the release configuration")
		out := fs.String("out", "bin/release/goreleaser.local.yaml", "where to write the local configuration")
		base := fs.String("base", "", "base image of every kos entry, pinned by digest")
		registry := fs.String("registry", "", "registry host:port to push the images to instead of their repositories' hosts")
		dist := fs.String("dist", "", "the dist directory to write to instead of the configuration's")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return writeLocalConfig(*in, *out, *base, *registry, *dist)
	case "digests":
		dist := fs.String("dist", "dist", "goreleaser's dist directory")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		images, err := readImages(*dist)
		if err != nil {
			return err
		}
		for _, im := range images {
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", im.ID, im.Digest, im.Name)
		}
		return nil
	case "compare":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 2 {
			return fmt.Errorf("compare takes two dist directories, got %d arguments", fs.NArg())
		}
		return compare(fs.Arg(0), fs.Arg(1), stdout)
	case "pin":
		action := fs.String("action", "action.yml", "the action's metadata file, rewritten in place")
		ref := releasedFlags(fs, "action", "the action's image")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		r, err := ref()
		if err != nil {
			return fmt.Errorf("pin: %w", err)
		}
		return pinFile(*action, r)
	case "pin-deploy":
		file := fs.String("kustomization", "deploy/base/kustomization.yaml", "the kustomization that deploys the service, rewritten in place")
		ref := releasedFlags(fs, "catalogbot", "the service image")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		r, err := ref()
		if err != nil {
			return fmt.Errorf("pin-deploy: %w", err)
		}
		return pinDeployFile(*file, r)
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], strings.TrimSuffix(usage, "\n"))
	}
}

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The local base stands in for the pinned public base
// (gcr.io/distroless/static-debian12:nonroot) when the release runs
// offline: what a static Go binary needs of an image, a CA bundle and a
// passwd with the nonroot user, and nothing else. Its bytes depend only on
// the CA bundle, so it is built again on every run, to the same digest.

// nonroot is distroless's unprivileged user, which the service image runs
// as; the Action's image sets user 0 over it.
const nonroot = 65532

// basePlatforms are the platforms the release builds images for.
var basePlatforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"},
	{OS: "linux", Architecture: "arm64"},
}

// baseRepo is the base's repository in the loopback registry.
const baseRepo = "catalogbot-base"

// baseLayer is the base's one layer: the CA bundle, the users and the
// directories they need, each entry with the zero time and root's or
// nonroot's ownership, in a fixed order.
func baseLayer(caBundle []byte) ([]byte, error) {
	type entry struct {
		name string
		mode int64
		uid  int
		body []byte
		dir  bool
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonroot, nonroot)
	group := fmt.Sprintf("root:x:0:\nnobody:x:65534:\nnonroot:x:%d:\n", nonroot)
	entries := []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, body: []byte(group)},
		{name: "etc/passwd", mode: 0o644, body: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, body: caBundle},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, uid: nonroot, dir: true},
		{name: "root/", mode: 0o700, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.uid,
			ModTime: time.Unix(0, 0),
			Format:  tar.FormatPAX,
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// baseIndex is the local base: one image per platform of basePlatforms,
// all with the same layer, in an OCI index.
func baseIndex(caBundle []byte) (v1.ImageIndex, error) {
	if len(caBundle) == 0 {
		return nil, errors.New("the CA bundle is empty")
	}
	tarBytes, err := baseLayer(caBundle)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarBytes)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range basePlatforms {
		img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{CreatedBy: "catalogbot hack/release base", Created: v1.Time{Time: time.Unix(0, 0).UTC()}}})
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = p.OS, p.Architecture
		cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
		cf.Config = v1.Config{
			User:       fmt.Sprint(nonroot),
			WorkingDir: "/home/nonroot",
			Env: []string{
				"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
				"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
			},
		}
		img, err = mutate.ConfigFile(img, cf)
		if err != nil {
			return nil, err
		}
		platform := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	return idx, nil
}

// writeLayout writes idx as the OCI layout dir, replacing what was there.
func writeLayout(dir string, idx v1.ImageIndex) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	_, err := layout.Write(dir, mutate.IndexMediaType(empty.Index, types.OCIImageIndex))
	if err != nil {
		return err
	}
	return layout.Path(dir).AppendIndex(idx)
}

// serveBase builds the base from the CA bundle at ca into the OCI layout
// dir, starts a registry on a loopback port, pushes the base from the
// layout into it, writes the registry's address and the base's pinned
// reference to envFile as make variables, and serves until ctx ends.
func serveBase(ctx context.Context, dir, ca, addr, envFile string, stdout io.Writer) error {
	bundle, err := os.ReadFile(ca)
	if err != nil {
		return fmt.Errorf("reading the CA bundle for the local base: %w (install Debian's ca-certificates or pass -ca)", err)
	}
	idx, err := baseIndex(bundle)
	if err != nil {
		return fmt.Errorf("%s: %w", ca, err)
	}
	if err := writeLayout(dir, idx); err != nil {
		return fmt.Errorf("writing the base's OCI layout %s: %w", dir, err)
	}
	// Push what the layout holds, so that the base the release uses is
	// the one on disk.
	stored, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return err
	}
	im, err := stored.IndexManifest()
	if err != nil {
		return err
	}
	if len(im.Manifests) != 1 {
		return fmt.Errorf("%s: want one index in the layout, found %d", dir, len(im.Manifests))
	}
	base, err := stored.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		return err
	}

	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("registry address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("registry address %q: want a loopback IP address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("the loopback registry: %w (another release running? pass -addr)", err)
	}
	srv := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(io.Discard, "", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer srv.Close()

	tag, err := name.NewTag(addr + "/" + baseRepo + ":local")
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(tag, base, remote.WithContext(ctx)); err != nil {
		return fmt.Errorf("pushing the base to %s: %w", tag, err)
	}
	digest, err := base.Digest()
	if err != nil {
		return err
	}
	pinned := tag.Context().Digest(digest.String()).String()
	if err := os.MkdirAll(filepath.Dir(envFile), 0o755); err != nil {
		return err
	}
	env := fmt.Sprintf("RELEASE_REGISTRY=%s\nRELEASE_BASE=%s\n", addr, pinned)
	if err := os.WriteFile(envFile+".tmp", []byte(env), 0o644); err != nil {
		return err
	}
	if err := os.Rename(envFile+".tmp", envFile); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "local base %s, registry http://%s\n", pinned, addr)

	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return err
	}
}

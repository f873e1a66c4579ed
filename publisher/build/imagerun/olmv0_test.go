package imagerun_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthv1 "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
)

// serveDeadline bounds how long an image may take to answer.
const serveDeadline = 90 * time.Second

// TestOLMv0Serves publishes the catalog onto an opm base and runs the
// image: opm, with the cache the build made and its integrity enforced,
// must answer with the catalog's packages and channel heads.
func TestOLMv0Serves(t *testing.T) {
	host := registrytest.New(t).Host
	img, res := publishOPM(t, host, build.Options{})
	want := "opm serve cache built with the base's own opm"
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], want) {
		t.Fatalf("notes %q, want %q", res.Notes, want)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(cfg.Config.Cmd, "--cache-enforce-integrity=false") {
		t.Fatalf("cmd %q turns the integrity check off", cfg.Config.Cmd)
	}
	checkServes(t, img)

	// The same inputs give the same image, cache layer included: opm's
	// json cache is the same bytes on every run.
	if _, again := publishOPM(t, host, build.Options{}); again.Digest != res.Digest {
		t.Errorf("second build: digest %s, want %s", again.Digest, res.Digest)
	}
}

// TestOLMv0WithoutCache shows what the cache is for: the image as it was
// built before (no cache, integrity enforced) exits at once with opm's
// integrity error, and the fallback command serves.
func TestOLMv0WithoutCache(t *testing.T) {
	img, res := publishOPM(t, registrytest.New(t).Host, build.Options{NoServeCache: true})
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "--cache-enforce-integrity=false") {
		t.Fatalf("notes %q, want the fallback", res.Notes)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	fallback := cfg.Config.Cmd
	cfg.Config.Cmd = slices.DeleteFunc(slices.Clone(fallback), func(s string) bool { return s == "--cache-enforce-integrity=false" })
	old, err := mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("no cache", func(t *testing.T) {
		r := start(t, old)
		select {
		case <-r.done:
		case <-time.After(serveDeadline):
			t.Fatal("still running")
		}
		// Without a chroot the path is the unpacked tree's.
		want := regexp.MustCompile(`integrity check failed: read existing cache digest: open \S*/tmp/cache/pogreb.v1/digest: no such file or directory`)
		if r.err == nil || !want.MatchString(r.output()) {
			t.Errorf("exit %v, output:\n%s\nwant a failure matching %q", r.err, r.output(), want)
		}
	})
	t.Run("fallback", func(t *testing.T) { checkServes(t, img) })
}

// publishOPM builds the catalog onto the opm base, pushed to the registry
// at host, and pushes the result there.
func publishOPM(t *testing.T, host string, o build.Options) (v1.Image, *build.Result) {
	t.Helper()
	base := host + "/operator-framework/opm:v1.65.0"
	registrytest.Push(t, base, opmBaseImage(t))
	o.OPMImage = base
	res, err := build.Build(context.Background(), catalogDir, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Image == nil {
		t.Fatal("built an index, want one image")
	}
	target := host + "/catalog/valid:latest"
	if _, err := build.Push(context.Background(), res, target, build.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	return res.Image, res
}

type running struct {
	port string
	done chan struct{}
	err  error
	mu   sync.Mutex
	out  bytes.Buffer
}

func (r *running) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.Write(p)
}

func (r *running) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// start unpacks img and runs its entrypoint and command on a free
// loopback port. As root it chroots into the image and runs as the image's
// user; otherwise it rewrites /configs and /tmp to the unpacked tree.
// Profiling goes to a free port and the termination log into /tmp, so
// runs do not collide with each other or touch the host.
func start(t *testing.T, img v1.Image) *running {
	t.Helper()
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	unpack(t, img, root)
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	r := &running{port: freePort(t), done: make(chan struct{})}
	args := append(slices.Clone(cfg.Config.Entrypoint), cfg.Config.Cmd...)
	args = append(args, "--port="+r.port, "--pprof-addr=127.0.0.1:0", "--termination-log=/tmp/termination-log")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"HOME=/"}
	if os.Geteuid() == 0 {
		uid, gid := user(cfg.Config.User)
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		cmd.Dir = "/"
	} else {
		for i, a := range args {
			args[i] = rewrite(a, root)
		}
		cmd = exec.Command(args[0], args[1:]...)
		cmd.Env = []string{"HOME=" + root, "TMPDIR=" + root + "/tmp"}
		cmd.Dir = root
	}
	cmd.Stdout, cmd.Stderr = r, r
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-r.done
	})
	return r
}

// rewrite points an argument that names an image path at the unpacked
// tree.
func rewrite(arg, root string) string {
	for _, p := range []string{"/configs", "/tmp/", "/bin/"} {
		if strings.HasPrefix(arg, p) {
			return root + arg
		}
		if k, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(v, p) {
			return k + "=" + root + v
		}
	}
	if arg == "/tmp/cache" {
		return root + arg
	}
	return arg
}

func user(s string) (uint32, uint32) {
	u, g, _ := strings.Cut(s, ":")
	uid, _ := strconv.ParseUint(u, 10, 32)
	gid, _ := strconv.ParseUint(g, 10, 32)
	return uint32(uid), uint32(gid)
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// checkServes runs img and asks it, over opm's gRPC API, for every
// package of the catalog and the head of each default channel.
func checkServes(t *testing.T, img v1.Image) {
	t.Helper()
	r := start(t, img)
	conn, err := grpc.NewClient("127.0.0.1:"+r.port, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), serveDeadline)
	defer cancel()
	waitServing(ctx, t, r, healthv1.NewHealthClient(conn))

	cfg, err := declcfg.LoadFS(ctx, os.DirFS(catalogDir))
	if err != nil {
		t.Fatal(err)
	}
	m, err := declcfg.ConvertToModel(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for name := range m {
		want = append(want, name)
	}
	slices.Sort(want)

	client := api.NewRegistryClient(conn)
	stream, err := client.ListPackages(ctx, &api.ListPackageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		p, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.GetName())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("packages %q, want %q", got, want)
	}
	for _, name := range want {
		pkg := m[name]
		head, err := pkg.DefaultChannel.Head()
		if err != nil {
			t.Fatal(err)
		}
		// Deprecated in opm's API, but OLM's catalog operator still asks it.
		//lint:ignore SA1019 the call a client of the image makes
		b, err := client.GetBundleForChannel(ctx, &api.GetBundleInChannelRequest{PkgName: name, ChannelName: pkg.DefaultChannel.Name})
		if err != nil {
			t.Fatalf("GetBundleForChannel %s/%s: %v", name, pkg.DefaultChannel.Name, err)
		}
		if b.GetCsvName() != head.Name || b.GetBundlePath() != head.Image {
			t.Errorf("%s/%s: bundle %s (%s), want %s (%s)", name, pkg.DefaultChannel.Name, b.GetCsvName(), b.GetBundlePath(), head.Name, head.Image)
		}
	}
}

// waitServing polls the health service until it reports SERVING, the
// process exits, or ctx ends.
func waitServing(ctx context.Context, t *testing.T, r *running, health healthv1.HealthClient) {
	t.Helper()
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := health.Check(cctx, &healthv1.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == healthv1.HealthCheckResponse_SERVING {
			return
		}
		select {
		case <-r.done:
			t.Fatalf("opm exited (%v) before serving:\n%s", r.err, r.output())
		case <-ctx.Done():
			t.Fatalf("not serving after %s (last: %v):\n%s", serveDeadline, err, r.output())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestOLMv0Platforms builds on an index of this host's platform and one
// it cannot run: the host's image gets the cache and serves with opm's
// own command, the other starts with the integrity check off, and the
// notes say which is which.
func TestOLMv0Platforms(t *testing.T) {
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	host := registrytest.New(t).Host
	base := host + "/operator-framework/opm:multi"
	native := opmBaseImage(t)
	cfg, err := native.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture = other
	foreign, err := mutate.ConfigFile(native, cfg)
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, img := range []v1.Image{native, foreign} {
		c, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		p := c.Platform()
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	r, err := name.ParseReference(base)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatal(err)
	}

	res, err := build.Build(context.Background(), catalogDir, build.Options{OPMImage: base})
	if err != nil {
		t.Fatal(err)
	}
	if res.Index == nil || len(res.Notes) != 2 {
		t.Fatalf("index %v, notes %q; want an index and two notes", res.Index != nil, res.Notes)
	}
	hostP, otherP := "linux/"+runtime.GOARCH, "linux/"+other
	if !strings.HasPrefix(res.Notes[0], hostP+": opm serve cache built") {
		t.Errorf("note %q, want the cache built for %s", res.Notes[0], hostP)
	}
	if !strings.HasPrefix(res.Notes[1], otherP+": no opm serve cache") || !strings.Contains(res.Notes[1], "--cache-enforce-integrity=false") {
		t.Errorf("note %q, want the fallback for %s", res.Notes[1], otherP)
	}
	m, err := res.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Manifests {
		img, err := res.Index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		c, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		off := slices.Contains(c.Config.Cmd, "--cache-enforce-integrity=false")
		if d.Platform.Architecture == runtime.GOARCH {
			if off {
				t.Errorf("%s: cmd %q turns the integrity check off", d.Platform, c.Config.Cmd)
			}
			checkServes(t, img)
		} else if !off {
			t.Errorf("%s: cmd %q keeps the integrity check", d.Platform, c.Config.Cmd)
		}
	}
}

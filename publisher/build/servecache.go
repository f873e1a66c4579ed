package build

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/publisher/tmpdir"
)

// The opm serve cache.
//
// Since v1.27, `opm serve --cache-dir` enforces the integrity of the cache
// unless --cache-only is given: an image whose /tmp/cache is empty exits at
// start. `opm generate dockerfile` therefore adds a RUN step that builds the
// cache with the base's own opm. A build without a daemon does the same:
// it takes the base's /bin/opm out of the base's layers, runs that step on
// this host when it can, and adds the result as a layer. Where it cannot
// (the base is for another architecture, has no opm, or its opm fails),
// the image's command turns the integrity check off instead, so opm
// builds the cache when the pod starts, and Result.Notes says so.
//
// Reproducibility: opm's default cache format (pogreb.v1) is not the same
// bytes from one run to the next, since opm writes packages and bundles in
// map order from several goroutines. Its other format, json, is: one file
// per bundle, written with encoding/json, and a digest over the catalog and
// those files. opm serves from whichever format it finds, and builds a new
// cache in the format of the one that is there. The cache directory is
// therefore seeded with an empty json cache before opm runs, and the
// result is checked to be a json cache; anything else is not used.

const (
	// CacheDir is where the image keeps the opm serve cache, as the
	// command opm generate dockerfile writes says.
	CacheDir = "/tmp/cache"
	// opmPath is the opm the image runs: the entrypoint set for BaseOPM.
	opmPath = "/bin/opm"
	// cacheTimeout bounds one run of opm building the cache; a 100 MB
	// catalog takes seconds.
	cacheTimeout = 5 * time.Minute
	// noIntegrity is the flag that lets opm start without a cache.
	noIntegrity = "--cache-enforce-integrity=false"
)

// The json cache layout opm v1.27+ writes and reads: a digest file and a
// directory of bundles, with these modes.
const (
	jsonCacheSubdir  = "cache"
	jsonCacheDigest  = "digest"
	jsonCacheDirMode = 0o750
	cacheRootMode    = 0o770
)

// serveCache is the cache layer for the opm base image of platform p, or
// nil and why there is none. The same opm binary gives the same layer, so
// platforms that share a binary share one run.
//
// Only what the inputs decide (the platform, the base's files, opm's own
// failure) gives no cache; a failure of this build (reading the base,
// the disk, a timeout, ctx) is an error, so that the image never depends
// on a transient fault.
func (b *builder) serveCache(ctx context.Context, base v1.Image, p v1.Platform) (v1.Layer, string, error) {
	if why := hostRuns(p); why != "" {
		return nil, why, nil
	}
	tmp, err := tmpdir.Make("", tmpdir.Prefix+"opm-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(tmp)

	run, key, err := extractOPM(base, tmp)
	var no *noOPMError
	if errors.As(err, &no) {
		return nil, no.why, nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("serve cache (%s): %w", p, err)
	}
	cfg, err := base.ConfigFile()
	if err != nil {
		return nil, "", err
	}
	// The layer is the binary's output, owned by the base's user.
	uid, gid := imageUser(cfg.Config.User)
	key = fmt.Sprintf("%s %d:%d", key, uid, gid)
	if c, ok := b.caches[key]; ok {
		return c.layer, c.why, nil
	}
	c := cacheResult{}
	dir, err := b.buildCache(ctx, run, tmp)
	var failed *opmFailedError
	switch {
	case errors.As(err, &failed):
		c.why = failed.Error()
	case err != nil:
		return nil, "", fmt.Errorf("serve cache (%s): %w", p, err)
	default:
		if c.layer, err = newTreeLayer(dir, CacheDir, b.epoch, uid, gid); err != nil {
			return nil, "", err
		}
	}
	b.caches[key] = c
	return c.layer, c.why, nil
}

// noOPMError is a base without an opm this host can run.
type noOPMError struct{ why string }

func (e *noOPMError) Error() string { return e.why }

func noOPM(format string, args ...any) error {
	return &noOPMError{fmt.Sprintf(format, args...)}
}

// opmFailedError is opm failing, or writing something else than a json
// cache, on this catalog.
type opmFailedError struct{ why string }

func (e *opmFailedError) Error() string { return e.why }

func opmFailed(format string, args ...any) error {
	return &opmFailedError{fmt.Sprintf(format, args...)}
}

type cacheResult struct {
	layer v1.Layer
	why   string
}

// hostRuns says why this host cannot run a binary for platform p, or ""
// when it can.
func hostRuns(p v1.Platform) string {
	host := runtime.GOOS + "/" + runtime.GOARCH
	switch {
	case runtime.GOOS != "linux":
		return "opm runs only on linux, and this host is " + host
	case p.OS != "linux" || p.Architecture != runtime.GOARCH:
		return "the base's opm is for " + p.String() + " and this host is " + host
	}
	return ""
}

// opmRun is how to start an opm taken out of a base: the binary itself
// when it is static, else the base's own dynamic loader with the base's
// libraries, so that nothing of this host's userland is used.
type opmRun struct {
	bin    string
	loader string // "" for a static binary
	libDir string
}

func (r opmRun) command(ctx context.Context, args ...string) *exec.Cmd {
	if r.loader == "" {
		return exec.CommandContext(ctx, r.bin, args...)
	}
	return exec.CommandContext(ctx, r.loader, append([]string{"--library-path", r.libDir, r.bin}, args...)...)
}

// extractOPM writes the base's /bin/opm, and for a dynamic one its loader
// and libraries, under tmp. key is the SHA-256 of the binary.
func extractOPM(base v1.Image, tmp string) (run opmRun, key string, err error) {
	layers := mkdir(tmp, "layers", &err)
	if err != nil {
		return run, "", err
	}
	fsys, err := readBaseFS(base, layers)
	if err != nil {
		return run, "", fmt.Errorf("read the base's layers: %w", err)
	}
	binPath, err := fsys.resolve(opmPath)
	if err != nil {
		return run, "", noOPM("the base has no opm: %v", err)
	}
	dir := mkdir(tmp, "run", &err)
	if err != nil {
		return run, "", err
	}
	run.bin = filepath.Join(dir, "opm")
	if err := fsys.extract(binPath, run.bin); err != nil {
		return run, "", fmt.Errorf("extract %s: %w", opmPath, err)
	}
	// opm is about 100 MB: hashed and parsed from the file, not memory.
	if key, err = fileSHA256(run.bin); err != nil {
		return run, "", err
	}
	f, err := elf.Open(run.bin)
	if err != nil {
		return run, "", noOPM("%s is not an ELF binary: %v", opmPath, err)
	}
	defer f.Close()
	if m, ok := elfMachines[runtime.GOARCH]; !ok || f.Machine != m {
		return run, "", noOPM("%s is a %s binary, not one for %s", opmPath, f.Machine, runtime.GOARCH)
	}
	interp := elfInterp(f)
	if interp == "" {
		return run, key, nil
	}
	// A dynamic binary: its loader and the libraries it needs, from the
	// base, into one directory.
	run.libDir = mkdir(tmp, "lib", &err)
	if err != nil {
		return run, "", err
	}
	loaderPath, err := fsys.resolve(interp)
	if err != nil {
		return run, "", noOPM("%s needs the loader %s: %v", opmPath, interp, err)
	}
	run.loader = filepath.Join(run.libDir, path.Base(interp))
	if err := fsys.extract(loaderPath, run.loader); err != nil {
		return run, "", err
	}
	done := map[string]bool{path.Base(interp): true}
	need, err := f.ImportedLibraries()
	if err != nil {
		return run, "", noOPM("%s: %v", opmPath, err)
	}
	for len(need) > 0 {
		lib := need[0]
		need = need[1:]
		if done[lib] {
			continue
		}
		done[lib] = true
		p, err := findLib(fsys, lib)
		if err != nil {
			return run, "", noOPM("%s needs %s: %v", opmPath, lib, err)
		}
		dst := filepath.Join(run.libDir, lib)
		if err := fsys.extract(p, dst); err != nil {
			return run, "", err
		}
		lf, err := elf.Open(dst)
		if err != nil {
			return run, "", noOPM("%s: %v", p, err)
		}
		more, err := lf.ImportedLibraries()
		lf.Close()
		if err != nil {
			return run, "", noOPM("%s: %v", p, err)
		}
		need = append(need, more...)
	}
	return run, key, nil
}

func fileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// elfMachines are the ELF machines of the architectures opm images ship.
var elfMachines = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
	"386":     elf.EM_386,
	"arm":     elf.EM_ARM,
}

// multiarch are Debian's library directories per architecture.
var multiarch = map[string]string{
	"amd64":   "x86_64-linux-gnu",
	"arm64":   "aarch64-linux-gnu",
	"ppc64le": "powerpc64le-linux-gnu",
	"s390x":   "s390x-linux-gnu",
	"386":     "i386-linux-gnu",
	"arm":     "arm-linux-gnueabihf",
}

func elfInterp(f *elf.File) string {
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			data, err := io.ReadAll(p.Open())
			if err != nil {
				return ""
			}
			return strings.TrimRight(string(data), "\x00")
		}
	}
	return ""
}

// findLib looks for a library in the loader's default directories.
func findLib(fsys *baseFS, lib string) (string, error) {
	dirs := []string{"/lib64", "/usr/lib64", "/lib", "/usr/lib"}
	if m := multiarch[runtime.GOARCH]; m != "" {
		dirs = append([]string{"/lib/" + m, "/usr/lib/" + m}, dirs...)
	}
	for _, d := range dirs {
		if p, err := fsys.resolve(path.Join(d, lib)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found in %s", strings.Join(dirs, ", "))
}

// buildCache runs `opm serve CONFIGS --cache-dir=DIR --cache-only`, the
// step opm generate dockerfile writes, on the catalog layer's own files,
// and returns DIR.
func (b *builder) buildCache(ctx context.Context, run opmRun, tmp string) (string, error) {
	var err error
	configs := mkdir(tmp, "configs", &err)
	work := mkdir(tmp, "work", &err)
	home := mkdir(tmp, "home", &err)
	cache := mkdir(tmp, "cache", &err)
	if err != nil {
		return "", err
	}
	// opm's digest of the catalog covers file sizes and modes, so the
	// files it reads are the layer's, with the layer's modes.
	if err := unpackTree(b.layer, path.Base(ConfigsDir), configs); err != nil {
		return "", fmt.Errorf("unpack the catalog: %w", err)
	}
	// An empty json cache: opm rebuilds a cache in the format it finds.
	if err := os.Chmod(cache, cacheRootMode); err != nil {
		return "", err
	}
	if err := os.Mkdir(filepath.Join(cache, jsonCacheSubdir), jsonCacheDirMode); err != nil {
		return "", err
	}
	if err := os.Chmod(filepath.Join(cache, jsonCacheSubdir), jsonCacheDirMode); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(cache, jsonCacheDigest), nil, 0o600); err != nil {
		return "", err
	}

	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	// The base is trusted configuration: it comes from the command line
	// or from the policy of the default branch, never from a pull
	// request, so running its opm here is running what the operator of
	// this build chose. It gets a clean environment, a private working
	// directory and temp directory, no profiling listener, and a time
	// limit; the catalog it reads has been validated.
	cmd := run.command(ctx, "serve", configs, "--cache-dir="+cache, "--cache-only",
		"--pprof-addr=", "--termination-log="+filepath.Join(work, "termination-log"))
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + home, "TMPDIR=" + work, "PATH=/nonexistent"}
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
				return "", fmt.Errorf("the base's opm did not build the cache within %s", cacheTimeout)
			}
			return "", ctx.Err()
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return "", fmt.Errorf("run the base's opm: %w", err)
		}
		return "", opmFailed("the base's opm failed to build the cache: %v: %s", err, lastLine(out.String()))
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{jsonCacheSubdir, jsonCacheDigest}) {
		return "", opmFailed("the base's opm wrote %v, not a json cache", names)
	}
	if fi, err := os.Stat(filepath.Join(cache, jsonCacheDigest)); err != nil || fi.Size() == 0 {
		return "", opmFailed("the base's opm wrote no cache digest")
	}
	return cache, nil
}

// imageUser is the numeric user and group an image's USER names; the
// cache belongs to them, as it would after a RUN step. A user name is not
// looked up: root owns the cache then, and the group (0, as a RUN step
// with a bare uid gives) can still read it.
func imageUser(user string) (uid, gid int) {
	u, g, _ := strings.Cut(user, ":")
	uid, _ = strconv.Atoi(u)
	gid, _ = strconv.Atoi(g)
	if uid < 0 {
		uid = 0
	}
	if gid < 0 {
		gid = 0
	}
	return uid, gid
}

// mkdir makes dir/name unless *err is already set, and sets *err if it
// fails, so a run of them needs one check.
func mkdir(dir, name string, err *error) string {
	p := filepath.Join(dir, name)
	if *err == nil {
		*err = os.Mkdir(p, 0o700)
	}
	return p
}

// limitedBuffer keeps the last 64 KiB written, enough for opm's error.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.b = append(l.b, p...)
	if n := len(l.b) - 64<<10; n > 0 {
		l.b = slices.Clone(l.b[n:])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "no output"
	}
	return s
}

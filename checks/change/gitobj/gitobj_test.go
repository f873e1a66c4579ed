package gitobj_test

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/change/gitobj"
)

// needGit skips a test that builds or reads repositories with the git CLI
// where there is none.
func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("this test compares with the git CLI, which is not installed: " + err.Error())
	}
}

func git(t testing.TB, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// deltaChainRepo is a bare repository holding the pack of testdata/delta-chain.
func deltaChainRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	packs := filepath.Join(dir, "objects", "pack")
	if err := os.MkdirAll(packs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pack-ee8a9e872fc728e28d07deaf0d4aca8c34365f7d.idx", "pack-ee8a9e872fc728e28d07deaf0d4aca8c34365f7d.pack"} {
		b, err := os.ReadFile(filepath.Join("testdata", "delta-chain", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(packs, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func open(t testing.TB, objects string) *gitobj.Store {
	t.Helper()
	s, err := gitobj.New(osfs.New(objects))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestDeltaChain reads the chain go-git's streaming reader gets wrong,
// whole and streamed, and checks the content against the sum recorded
// with the pack.
func TestDeltaChain(t *testing.T) {
	s := open(t, filepath.Join(deltaChainRepo(t), "objects"))
	tests := []struct {
		id, sha256 string
		size       int64
	}{
		{"447a09fd68dcb4bf090af3c9be6aa312c7f9b13f", "4be0b8888ce3d69d9b9190cf38c3cb753e880a2c23748d620e814e497c09b335", 1_101_810},
		{"2f9785009f815f9301111b9f02bc740052f89a33", "", 1_062_860},
		{"c23090af2007e19a3747dc4476b267ec286ead73", "", -1},
		{"6fb003137bc6d4c86853b994386d52ee20d4c935", "", -1},
	}
	for _, tt := range tests {
		t.Run(tt.id[:8], func(t *testing.T) {
			h := plumbing.NewHash(tt.id)
			typ, size, err := s.Header(h)
			if err != nil {
				t.Fatal(err)
			}
			if typ != plumbing.BlobObject || (tt.size >= 0 && size != tt.size) {
				t.Errorf("Header = %v %d, want blob %d", typ, size, tt.size)
			}
			_, whole, err := s.Read(h)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(whole)) != size {
				t.Errorf("Read: %d bytes, Header said %d", len(whole), size)
			}
			r, _, _, err := s.Open(h)
			if err != nil {
				t.Fatal(err)
			}
			streamed, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(whole, streamed) {
				t.Error("Open and Read disagree")
			}
			if tt.sha256 != "" {
				sum := sha256.Sum256(whole)
				if got := hex.EncodeToString(sum[:]); got != tt.sha256 {
					t.Errorf("sha256 %s, want %s", got, tt.sha256)
				}
			}
		})
	}
}

// TestMismatch stores an object under an id that is not its own, loose and
// packed, and expects every read to fail with a *MismatchError naming the
// object, never to hand over the bytes as the object's.
func TestMismatch(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q", "--bare")
	good := strings.TrimSpace(string(git(t, dir, []byte("the right content\n"), "hash-object", "-w", "--stdin")))
	h := plumbing.NewHash(good)
	loose := filepath.Join(dir, "objects", good[:2], good[2:])

	tests := []struct {
		name    string
		content string // what the object's file holds instead
		wantErr error
	}{
		{"same size, other bytes", "blob 18\x00the wrong content\n", gitobj.ErrCorrupt},
		{"shorter", "blob 18\x00short\n", gitobj.ErrCorrupt},
		{"other type", "tree 18\x00the right content\n", gitobj.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			w.Write([]byte(tt.content))
			w.Close()
			os.Chmod(loose, 0o644)
			if err := os.WriteFile(loose, z.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			s := open(t, filepath.Join(dir, "objects"))
			_, b, err := s.Read(h)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Read = %q, %v; want an error wrapping %v", b, err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), good) {
				t.Errorf("error %q does not name the object", err)
			}
			r, _, _, err := s.Open(h)
			if err == nil {
				_, err = io.ReadAll(r)
				r.Close()
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("streamed read: %v; want an error wrapping %v", err, tt.wantErr)
			}
		})
	}
	// The zlib trailer's Adler-32 is not checked: the object's SHA-1 is.
	// A stream whose stored bytes were changed under an intact trailer
	// still fails, and so does one that is not zlib at all.
	var stored bytes.Buffer
	w, _ := zlib.NewWriterLevel(&stored, zlib.NoCompression)
	w.Write([]byte("blob 18\x00the right content\n"))
	w.Close()
	flipped := bytes.Replace(stored.Bytes(), []byte("right"), []byte("wrong"), 1)
	for name, data := range map[string][]byte{
		"stored bytes changed, trailer kept": flipped,
		"not zlib":                           []byte("blob 18\x00the right content\n"),
	} {
		os.Chmod(loose, 0o644)
		if err := os.WriteFile(loose, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, b, err := open(t, filepath.Join(dir, "objects")).Read(h); !errors.Is(err, gitobj.ErrCorrupt) {
			t.Errorf("%s: Read = %q, %v; want an error wrapping ErrCorrupt", name, b, err)
		}
	}

	var me *gitobj.MismatchError
	os.WriteFile(loose, zlibBytes("blob 18\x00the wrong content\n"), 0o644)
	if _, _, err := open(t, filepath.Join(dir, "objects")).Read(h); !errors.As(err, &me) || me.Object != h {
		t.Errorf("Read: %v, want a *MismatchError for %s", err, h)
	}
}

func zlibBytes(s string) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte(s))
	w.Close()
	return z.Bytes()
}

// chainRepo builds a repository with git whose history is n revisions of a
// few files sharing most of their content, some over a MiB, then packs it
// with git's own delta search at the given depth and window.
func chainRepo(t testing.TB, seed uint64, n, depth, window int, big bool) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q", "-b", "main")
	git(t, dir, nil, "config", "core.bigFileThreshold", "512m")
	files := []string{"a.yaml", "b.json", "c.yaml"}
	content := map[string][]string{}
	for _, f := range files {
		lines := 50 + rng.IntN(400)
		if big && f == "a.yaml" {
			lines = 40_000 + rng.IntN(10_000) // about 1.5 MiB: over the old streaming size
		}
		for i := range lines {
			content[f] = append(content[f], fmt.Sprintf("- name: pkg.v%d.%d\n  image: quay.io/x/y@sha256:%016x", i, rng.IntN(100), rng.Uint64()))
		}
	}
	for rev := range n {
		for _, f := range files {
			c := content[f]
			for range 1 + rng.IntN(5) {
				switch i := rng.IntN(len(c)); rng.IntN(3) {
				case 0:
					c[i] = fmt.Sprintf("- name: edited.%d.%d", rev, rng.Uint64())
				case 1:
					c = append(c[:i], c[i+1:]...)
				default:
					c = append(c[:i], append([]string{fmt.Sprintf("  inserted: %d", rng.Uint64())}, c[i:]...)...)
				}
			}
			content[f] = c
			if err := os.WriteFile(filepath.Join(dir, f), []byte(strings.Join(c, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git(t, dir, nil, "add", "-A")
		git(t, dir, nil, "commit", "-q", "-m", fmt.Sprint(rev))
	}
	git(t, dir, nil, "repack", "-q", "-adf", fmt.Sprintf("--depth=%d", depth), fmt.Sprintf("--window=%d", window))
	return dir
}

// compareWithGit reads every object of the repository at dir with the
// store, whole and streamed, and compares it with git cat-file --batch.
func compareWithGit(t testing.TB, dir string) (objects, deltas int) {
	t.Helper()
	s := open(t, filepath.Join(dir, ".git", "objects"))
	list := git(t, dir, nil, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype) %(objectsize) %(deltabase)")
	var ids []string
	for line := range strings.Lines(string(list)) {
		f := strings.Fields(line)
		ids = append(ids, f[0])
		if f[3] != strings.Repeat("0", 40) {
			deltas++
		}
	}
	batch := bufio.NewReader(bytes.NewReader(git(t, dir, []byte(strings.Join(ids, "\n")+"\n"), "cat-file", "--batch")))
	for _, id := range ids {
		var gotID, typ string
		var size int
		if _, err := fmt.Fscanf(batch, "%s %s %d\n", &gotID, &typ, &size); err != nil || gotID != id {
			t.Fatalf("git cat-file --batch: %v (%s, want %s)", err, gotID, id)
		}
		want := make([]byte, size+1)
		if _, err := io.ReadFull(batch, want); err != nil {
			t.Fatal(err)
		}
		want = want[:size]
		h := plumbing.NewHash(id)
		gotTyp, got, err := s.Read(h)
		if err != nil {
			t.Fatalf("Read %s: %v", id, err)
		}
		if gotTyp.String() != typ || !bytes.Equal(got, want) {
			t.Fatalf("Read %s: %s of %d bytes, git says %s of %d", id, gotTyp, len(got), typ, size)
		}
		r, _, _, err := s.Open(h)
		if err != nil {
			t.Fatalf("Open %s: %v", id, err)
		}
		streamed, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(streamed, want) {
			t.Fatalf("Open %s: %d bytes, %v; git says %d bytes", id, len(streamed), err, size)
		}
		objects++
	}
	return objects, deltas
}

// FuzzDeltaChains compares the store with git cat-file on repositories
// git packs with deep and wide delta searches, large files included.
// TestPackedMismatch: a whole object in a pack whose stored bytes were
// changed (a pack written without compression, so the change survives
// inflating, under an intact zlib trailer) reads as ErrCorrupt through
// every reader: Read, Open, and ReadShared, which hashes while inflating.
func TestPackedMismatch(t *testing.T) {
	needGit(t)
	content := strings.Repeat("the right content\n", 5000) // several inflate chunks
	dir, good, pack, data := packOne(t, content, "-c", "pack.compression=0")
	i := bytes.LastIndex(data, []byte("right"))
	if i < 0 {
		t.Fatal("the pack does not hold the content stored")
	}
	copy(data[i:], "wrong")
	os.Chmod(pack, 0o644)
	if err := os.WriteFile(pack, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h := plumbing.NewHash(good)
	reads := map[string]func(s *gitobj.Store) error{
		"Read":       func(s *gitobj.Store) error { _, _, err := s.Read(h); return err },
		"ReadShared": func(s *gitobj.Store) error { _, _, err := s.ReadShared(h); return err },
		"Open": func(s *gitobj.Store) error {
			r, _, _, err := s.Open(h)
			if err != nil {
				return err
			}
			defer r.Close()
			_, err = io.ReadAll(r)
			return err
		},
	}
	for name, read := range reads {
		// A store of its own for each: none finds it in a cache.
		err := read(open(t, filepath.Join(dir, "objects")))
		var me *gitobj.MismatchError
		if !errors.As(err, &me) || me.Object != h {
			t.Errorf("%s: %v; want a *MismatchError of %s", name, err, good)
		}
	}
}

// TestPackedStreamDamaged: a whole object whose compressed stream is cut
// short, or whose entry states a size the stream does not inflate to
// (larger or smaller), reads as ErrCorrupt naming the pack and the
// entry's offset, through Read and ReadShared.
func TestPackedStreamDamaged(t *testing.T) {
	needGit(t)
	content := strings.Repeat("catalog line\n", 4000) + "12345678" // a size of 8 modulo 16
	damages := map[string]struct {
		damage func(data []byte) []byte
		want   string
	}{
		"cut short": {func(d []byte) []byte { return d[:len(d)/2] }, "stream ends early"},
		// The entry's first byte holds the size's low 4 bits.
		"stated size larger":  {func(d []byte) []byte { d[12]++; return d }, "stream ends before the stated size"},
		"stated size smaller": {func(d []byte) []byte { d[12]--; return d }, "stream runs past the stated size"},
	}
	for name, c := range damages {
		t.Run(name, func(t *testing.T) {
			dir, id, pack, data := packOne(t, content)
			if data[12]&0x0f != 8 {
				t.Fatalf("entry header %x: not the size written", data[12])
			}
			os.Chmod(pack, 0o644)
			if err := os.WriteFile(pack, c.damage(data), 0o644); err != nil {
				t.Fatal(err)
			}
			h := plumbing.NewHash(id)
			where := strings.TrimSuffix(filepath.Base(pack), ".pack") + ".pack at 12: "
			for read, f := range map[string]func(s *gitobj.Store) error{
				"Read":       func(s *gitobj.Store) error { _, _, err := s.Read(h); return err },
				"ReadShared": func(s *gitobj.Store) error { _, _, err := s.ReadShared(h); return err },
			} {
				err := f(open(t, filepath.Join(dir, "objects")))
				if !errors.Is(err, gitobj.ErrCorrupt) || !strings.Contains(fmt.Sprint(err), where+"deflate: "+c.want) {
					t.Errorf("%s: %v; want ErrCorrupt naming %q and %q", read, err, where, c.want)
				}
			}
		})
	}
}

func FuzzDeltaChains(f *testing.F) {
	f.Add(uint64(1), uint8(10), uint8(50), uint8(10), false)
	f.Add(uint64(2), uint8(30), uint8(250), uint8(250), false)
	f.Add(uint64(3), uint8(12), uint8(5), uint8(3), true)
	f.Add(uint64(4), uint8(8), uint8(1), uint8(50), true)
	f.Fuzz(func(t *testing.T, seed uint64, n, depth, window uint8, big bool) {
		needGit(t)
		n = 1 + n%40
		if big {
			n = min(n, 12) // each revision writes a few MiB
		}
		dir := chainRepo(t, seed, int(n), 1+int(depth), 1+int(window), big)
		objects, deltas := compareWithGit(t, dir)
		if n > 3 && deltas == 0 {
			t.Errorf("%d objects and no delta: the test does not exercise deltas", objects)
		}
	})
}

// TestLooseAndAlternates reads a repository before it is packed (loose
// objects) and through a clone that borrows its objects (alternates).
func TestLooseAndAlternates(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "f"), []byte("content\n"), 0o644)
	git(t, dir, nil, "add", "f")
	git(t, dir, nil, "commit", "-q", "-m", "one")
	if objects, _ := compareWithGit(t, dir); objects != 3 {
		t.Errorf("%d loose objects, want 3", objects)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, dir, nil, "clone", "-q", "--shared", "--bare", dir, clone)
	head := strings.TrimSpace(string(git(t, dir, nil, "rev-parse", "HEAD")))
	s := open(t, filepath.Join(clone, "objects"))
	if typ, b, err := s.Read(plumbing.NewHash(head)); err != nil || typ != plumbing.CommitObject || !bytes.Contains(b, []byte("one")) {
		t.Errorf("Read through alternates: %v %q %v", typ, b, err)
	}
	if _, _, err := s.Read(plumbing.NewHash(strings.Repeat("ab", 20))); !errors.Is(err, plumbing.ErrObjectNotFound) {
		t.Errorf("missing object: %v, want ErrObjectNotFound", err)
	}
}

// TestPackAddedLater opens a store, then lets git add objects and pack
// them (as a fetch does in the App's cached clone): the store finds them.
func TestPackAddedLater(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "f"), []byte("one\n"), 0o644)
	git(t, dir, nil, "add", "f")
	git(t, dir, nil, "commit", "-q", "-m", "one")
	git(t, dir, nil, "repack", "-q", "-ad")
	s := open(t, filepath.Join(dir, ".git", "objects"))
	if _, _, err := s.Read(plumbing.NewHash(strings.TrimSpace(string(git(t, dir, nil, "rev-parse", "HEAD"))))); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("two\n"), 0o644)
	git(t, dir, nil, "commit", "-q", "-am", "two")
	git(t, dir, nil, "repack", "-q", "-d") // a second pack beside the first
	head := plumbing.NewHash(strings.TrimSpace(string(git(t, dir, nil, "rev-parse", "HEAD"))))
	if typ, b, err := s.Read(head); err != nil || typ != plumbing.CommitObject || !bytes.Contains(b, []byte("two")) {
		t.Errorf("a commit packed after the store opened: %v %q %v", typ, b, err)
	}
}

// TestReadAgainFromCache: a packed object read whole once is read again
// from the content the first read verified, not inflated again; one read
// only in part is not kept, so a damaged pack is still found.
func TestReadAgainFromCache(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q", "--bare")
	content := strings.Repeat("catalog line\n", 4000)
	id := strings.TrimSpace(string(git(t, dir, []byte(content), "hash-object", "-w", "--stdin")))
	git(t, dir, nil, "tag", "kept", id) // a reference, so that repack packs it
	git(t, dir, nil, "repack", "-q", "-a", "-d")
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs %v", packs)
	}
	damage := func() {
		data, err := os.ReadFile(packs[0])
		if err != nil {
			t.Fatal(err)
		}
		// The one object's compressed bytes lie between the header (12
		// bytes) and the trailer (20).
		data[len(data)/2] ^= 0xff
		os.Chmod(packs[0], 0o644)
		if err := os.WriteFile(packs[0], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func(s *gitobj.Store) (string, error) {
		r, _, _, err := s.Open(plumbing.NewHash(id))
		if err != nil {
			return "", err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		return string(b), err
	}

	s := open(t, filepath.Join(dir, "objects"))
	r, _, _, err := s.Open(plumbing.NewHash(id))
	if err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 100)
	if _, err := io.ReadFull(r, part); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if got, err := readAll(s); err != nil || got != content {
		t.Fatalf("first whole read: %d bytes, %v", len(got), err)
	}
	damage()
	if got, err := readAll(s); err != nil || got != content {
		t.Errorf("a read after a whole verified read: %d bytes, %v; want the content kept", len(got), err)
	}
	fresh := open(t, filepath.Join(dir, "objects"))
	if _, err := readAll(fresh); err == nil {
		t.Error("a store that never read the object whole read the damaged pack without an error")
	}
}

// TestReadSharedOnce: readers that ask for one delta-compressed object at
// once share one rebuild (the same verified bytes), a later shared read
// takes those bytes from the cache, and Read still hands its caller a
// copy of its own, so that writing to it changes no one else's view.
func TestReadSharedOnce(t *testing.T) {
	needGit(t)
	dir := chainRepo(t, 7, 12, 50, 10, false)
	s := open(t, filepath.Join(dir, ".git", "objects"))
	id := strings.TrimSpace(string(git(t, dir, nil, "rev-parse", "HEAD:a.yaml")))
	want := git(t, dir, nil, "cat-file", "blob", id)
	base := strings.TrimSpace(string(git(t, dir, []byte(id+"\n"), "cat-file", "--batch-check=%(deltabase)")))
	if base == strings.Repeat("0", 40) {
		t.Fatalf("%s is stored whole; the test needs a delta", id)
	}
	h := plumbing.NewHash(id)

	const readers = 8
	got := make([][]byte, readers)
	errs := make([]error, readers)
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() { _, got[i], errs[i] = s.ReadShared(h) })
	}
	wg.Wait()
	for i := range readers {
		if errs[i] != nil || !bytes.Equal(got[i], want) {
			t.Fatalf("reader %d: %d bytes, %v; want git's %d", i, len(got[i]), errs[i], len(want))
		}
	}
	_, again, err := s.ReadShared(h)
	if err != nil || &again[0] != &got[0][0] {
		t.Errorf("a shared read after the first: %v, same bytes %v; want the kept bytes", err, err == nil && &again[0] == &got[0][0])
	}
	_, own, err := s.Read(h)
	if err != nil || !bytes.Equal(own, want) {
		t.Fatalf("Read: %d bytes, %v", len(own), err)
	}
	for i := range own {
		own[i] = 'x'
	}
	if _, after, err := s.ReadShared(h); err != nil || !bytes.Equal(after, want) {
		t.Errorf("a shared read after writing to Read's bytes: %v, equal %v", err, bytes.Equal(after, want))
	}
}

// packOne writes content as the one object of a pack in a new bare
// repository, with git's options before pack-objects, and returns the
// repository, the object's id, the pack's path and its bytes.
func packOne(t *testing.T, content string, opts ...string) (dir, id, pack string, data []byte) {
	t.Helper()
	dir = t.TempDir()
	git(t, dir, nil, "init", "-q", "--bare")
	id = strings.TrimSpace(string(git(t, dir, []byte(content), "hash-object", "-w", "--stdin")))
	git(t, dir, []byte(id+"\n"), append(opts, "pack-objects", "-q", "objects/pack/pack")...)
	os.RemoveAll(filepath.Join(dir, "objects", id[:2]))
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs %v; want one", packs)
	}
	data, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	return dir, id, packs[0], data
}

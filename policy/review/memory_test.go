package review

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/checkstest"
)

// memory is a Memory that records what it was asked for.
type memory struct {
	size     int64
	acquired []int64
	released int
}

func (m *memory) Size() int64 { return m.size }

func (m *memory) Acquire(_ context.Context, n int64) (func(), error) {
	m.acquired = append(m.acquired, n)
	return func() { m.released++ }, nil
}

// sizeUnder sums the sizes of the files of fsys under dir.
func sizeUnder(t *testing.T, fsys fstest.MapFS, dir string) int64 {
	t.Helper()
	var n int64
	for p, f := range fsys {
		if strings.HasPrefix(p, dir+"/") {
			n += int64(len(f.Data))
		}
	}
	return n
}

// TestEvaluateReservesMemory: the review reserves, before any check
// reads, the files of the package directories the change touches on both
// sides, and nothing of the packages it leaves alone or of files over
// limits.fileBytes; a check that would read more than the whole memory is
// a MemoryError naming the files, and nothing is reserved for it.
func TestEvaluateReservesMemory(t *testing.T) {
	big := strings.Repeat("x", 3000)
	cases := []struct {
		name string
		// size is the memory's; over says the check is too large for it.
		size   int64
		policy string
		over   bool
	}{
		{name: "reserved", size: 1 << 20},
		{name: "over-file-bytes-left-out", size: 1 << 20, policy: "limits:\n  fileBytes: 2000\n"},
		{name: "too-large", size: 2000, over: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, base, head := edit("alice")
			if tc.policy != "" {
				base[".catalogbot.yaml"] = &fstest.MapFile{Data: []byte(tc.policy)}
				head[".catalogbot.yaml"] = base[".catalogbot.yaml"]
			}
			head["catalog/foo/big.json"] = &fstest.MapFile{Data: []byte(big)}
			c.Files = append(c.Files, change.File{Path: "catalog/foo/big.json", Status: change.Added})
			want := sizeUnder(t, base, "catalog/foo") + sizeUnder(t, head, "catalog/foo")
			if tc.policy != "" {
				want -= int64(len(big))
			}
			mem := &memory{size: tc.size}
			o, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head, Memory: mem})
			var me *MemoryError
			if tc.over {
				if !errors.As(err, &me) {
					t.Fatalf("got %v, %v; want a MemoryError", o, err)
				}
				if me.Reads.Bytes != want || me.Budget != tc.size || len(mem.acquired) != 0 {
					t.Errorf("reads %d of budget %d, acquired %v; want %d of %d, nothing acquired", me.Reads.Bytes, me.Budget, mem.acquired, want, tc.size)
				}
				title, summary := TooLargeForMemory(me)
				checkstest.Golden(t, filepath.Join("testdata", "memory", tc.name+".md"), []byte("# "+title+"\n\n"+summary))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !o.Valid() || len(o.Report.Results) == 0 {
				t.Fatalf("no checks ran: %+v", o.PolicyFindings)
			}
			if len(mem.acquired) != 1 || mem.acquired[0] != want || mem.released != 1 {
				t.Errorf("acquired %v, released %d times; want [%d] released once", mem.acquired, mem.released, want)
			}
		})
	}
}

// TestEvaluateWithoutMemoryLimit: a memory of no size (a service with no
// limit) reserves nothing, and the checks run.
func TestEvaluateWithoutMemoryLimit(t *testing.T) {
	c, base, head := edit("alice")
	mem := &memory{}
	if _, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head, Memory: mem}); err != nil {
		t.Fatal(err)
	}
	if len(mem.acquired) != 0 {
		t.Errorf("acquired %v with no limit", mem.acquired)
	}
}

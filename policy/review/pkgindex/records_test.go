package pkgindex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recordBody holds what a record's body may: line breaks and tabs, which
// the file's own lines must not be confused with.
const recordBody = "{\"a\":1}\nsha256\tfake\n\tsize\t3"

// TestRecordFormat: the file as written, against
// testdata/record.golden, and read back whole.
func TestRecordFormat(t *testing.T) {
	got := encodeRecord("operators", rootA, []byte(recordBody))
	golden(t, "encodeRecord", "record.golden", got)
	body, err := decodeRecord(got, "operators", rootA)
	if err != nil || string(body) != recordBody {
		t.Errorf("decodeRecord = %q, %v", body, err)
	}
}

// TestRecordRefused: a record that is damaged, of another version, kind or
// tree, or whose size does not hold, is not found.
func TestRecordRefused(t *testing.T) {
	good := string(encodeRecord("operators", rootA, []byte(recordBody)))
	resum := withSum
	tests := []struct{ name, data, kind, tree string }{
		{"empty", "", "operators", rootA},
		{"truncated", good[:len(good)-20], "operators", rootA},
		{"no final newline", strings.TrimSuffix(good, "\n"), "operators", rootA},
		{"a byte changed", strings.Replace(good, `"a":1`, `"a":2`, 1), "operators", rootA},
		{"asked for another tree", good, "operators", rootB},
		{"asked for another kind", good, "pkgs", rootA},
		{"another version", resum(strings.Replace(body(good), "record 1", "record 2", 1)), "operators", rootA},
		{"a size that does not hold", resum(strings.Replace(body(good), "size\t", "size\t1", 1)), "operators", rootA},
		{"a body cut short", resum(strings.Replace(body(good), `{"a":1}`, `{"a"}`, 1)), "operators", rootA},
		{"a negative size", resum(strings.Replace(body(good), "size\t", "size\t-", 1)), "operators", rootA},
	}
	for _, tt := range tests {
		if b, err := decodeRecord([]byte(tt.data), tt.kind, tt.tree); err == nil {
			t.Errorf("%s: decoded as %q", tt.name, b)
		}
	}
}

// TestRecordStore: LoadRecord finds only a record saved for the kind and
// tree asked for, never one copied under another tree's name or a
// damaged one; past MaxRecords the least recently used go, apart from
// the package indexes.
func TestRecordStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxFiles: 1, MaxRecords: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.LoadRecord("operators", rootA); ok {
		t.Fatal("an empty store loaded a record")
	}
	if err := s.SaveRecord("operators", rootA, []byte("A")); err != nil {
		t.Fatal(err)
	}
	if b, ok := s.LoadRecord("operators", rootA); !ok || string(b) != "A" {
		t.Fatalf("LoadRecord(A) = %q, %v", b, ok)
	}
	for _, bad := range []struct{ kind, tree string }{{"../x", rootA}, {"operators", "../" + rootA}, {"Operators", rootA}} {
		if err := s.SaveRecord(bad.kind, bad.tree, nil); err == nil {
			t.Errorf("SaveRecord(%q, %q) wrote", bad.kind, bad.tree)
		}
		if _, ok := s.LoadRecord(bad.kind, bad.tree); ok {
			t.Errorf("LoadRecord(%q, %q) found one", bad.kind, bad.tree)
		}
	}
	// A's file copied under B's name claims A: never B's.
	fileA := filepath.Join(dir, rootA+".operators.rec")
	data, err := os.ReadFile(fileA)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rootB+".operators.rec"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, ok := s.LoadRecord("operators", rootB); ok {
		t.Fatalf("LoadRecord(B) trusted A's record: %q", b)
	}
	// A damaged file is not found.
	damaged := []byte(strings.Replace(string(data), "\nA\n", "\nB\n", 1))
	if err := os.WriteFile(fileA, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, ok := s.LoadRecord("operators", rootA); ok {
		t.Fatalf("LoadRecord(A) trusted a damaged record: %q", b)
	}

	// The bound: a package index does not count against the records,
	// and the least recently used record goes.
	if err := s.Save("catalogs/v4.20", sample(rootA)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRecord("operators", rootA, []byte("A")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, rootB+".operators.rec"), old, old); err != nil {
		t.Fatal(err)
	}
	rootC := strings.Repeat("3", 40)
	if err := s.SaveRecord("operators", rootC, []byte("C")); err != nil {
		t.Fatal(err)
	}
	for tree, want := range map[string]bool{rootA: true, rootB: false, rootC: true} {
		if _, err := os.Stat(filepath.Join(dir, tree+".operators.rec")); (err == nil) != want {
			t.Errorf("after the bound: record %s kept = %v, want %v", tree[:4], err == nil, want)
		}
	}
	if !s.Has(rootA) {
		t.Error("the package index went with the records")
	}
}

// TestNearestRecord: NearestRecord is the record of a kind saved last,
// whatever its tree, checked as LoadRecord checks it; none of another
// kind, none before any was saved, none once the last is damaged.
func TestNearestRecord(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.NearestRecord("operators"); ok {
		t.Fatal("a nearest record before any was saved")
	}
	for _, r := range []struct{ tree, body string }{{rootA, `{"a":1}`}, {rootB, `{"b":2}`}} {
		if err := s.SaveRecord("operators", r.tree, []byte(r.body)); err != nil {
			t.Fatal(err)
		}
	}
	if tree, data, ok := s.NearestRecord("operators"); !ok || tree != rootB || string(data) != `{"b":2}` {
		t.Errorf("NearestRecord = %s %q %t, want the last saved, %s", tree, data, ok, rootB)
	}
	if _, _, ok := s.NearestRecord("pkgs"); ok {
		t.Error("a nearest record of a kind never saved")
	}
	name := s.recordFile("operators", rootB)
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(strings.Replace(string(data), `"b":2`, `"b":3`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if tree, data, ok := s.NearestRecord("operators"); ok {
		t.Errorf("a damaged last record was taken: %s %q", tree, data)
	}
}

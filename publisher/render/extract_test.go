package render

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

type layerEntries = []rendertest.Entry

// snapshot lists an extracted tree: "dir/" for directories, "file=body"
// for files.
func snapshot(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			out = append(out, rel+"/")
		case d.Type().IsRegular():
			body, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, rel+"="+string(body))
		default:
			out = append(out, rel+"?"+d.Type().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestExtractTree(t *testing.T) {
	tests := []struct {
		name      string
		sub       string
		layers    []layerEntries
		want      []string
		wantFound bool
	}{
		{
			name: "whole image with whiteouts",
			layers: []layerEntries{
				{{Name: "a/"}, {Name: "a/x", Body: "1"}, {Name: "a/y", Body: "2"}, {Name: "b/"}, {Name: "b/z", Body: "3"}, {Name: "f", Body: "file"}},
				{{Name: "a/.wh.x"}, {Name: ".wh.b"}, {Name: "f/"}, {Name: "f/inside", Body: "dir now"}},
			},
			want:      []string{"a/", "a/y=2", "f/", "f/inside=dir now"},
			wantFound: true,
		},
		{
			name: "opaque directory keeps this layer's entries only",
			layers: []layerEntries{
				{{Name: "d/"}, {Name: "d/old", Body: "old"}, {Name: "d/sub/"}, {Name: "d/sub/deep", Body: "old"}},
				{{Name: "d/new", Body: "new"}, {Name: "d/.wh..wh..opq"}, {Name: "d/sub/later", Body: "new"}},
			},
			want:      []string{"d/", "d/new=new", "d/sub/", "d/sub/later=new"},
			wantFound: true,
		},
		{
			name: "only the subtree is written",
			sub:  "/configs/",
			layers: []layerEntries{
				{{Name: "./configs/"}, {Name: "./configs/a.yaml", Body: "a"}, {Name: "etc/passwd", Body: "root"}, {Name: "configsx", Body: "no"}},
			},
			want:      []string{"a.yaml=a"},
			wantFound: true,
		},
		{
			name: "ancestor replaced by a file",
			sub:  "var/configs",
			layers: []layerEntries{
				{{Name: "var/configs/a.yaml", Body: "a"}},
				{{Name: "var", Body: "now a file"}},
			},
			wantFound: false,
		},
		{
			name: "opaque ancestor",
			sub:  "var/configs",
			layers: []layerEntries{
				{{Name: "var/configs/a.yaml", Body: "a"}, {Name: "var/configs/b.yaml", Body: "b"}},
				{{Name: "var/.wh..wh..opq"}, {Name: "var/configs/b.yaml", Body: "b2"}},
			},
			want:      []string{"b.yaml=b2"},
			wantFound: true,
		},
		{
			name: "subtree never present",
			sub:  "configs",
			layers: []layerEntries{
				{{Name: "other/a.yaml", Body: "a"}},
			},
			wantFound: false,
		},
		{
			name: "links",
			sub:  "configs",
			layers: []layerEntries{
				{
					{Name: "configs/real.yaml", Body: "real"},
					{Name: "configs/rel.yaml", Link: "real.yaml"},
					{Name: "configs/abs.yaml", Link: "/configs/real.yaml"},
					{Name: "configs/chain.yaml", Link: "abs.yaml"},
					{Name: "configs/hard.yaml", HardLink: "configs/real.yaml"},
					{Name: "configs/escape.yaml", Link: "../../etc/passwd"},
					{Name: "configs/host.yaml", Link: "/etc/passwd"},
					{Name: "configs/outside.yaml", Link: "/other/file.yaml"},
					{Name: "configs/dir", Link: "sub"},
					{Name: "configs/sub/x.yaml", Body: "x"},
					{Name: "configs/loop1", Link: "loop2"},
					{Name: "configs/loop2", Link: "loop1"},
					{Name: "other/file.yaml", Body: "outside"},
				},
				{{Name: "configs/.wh.gone.yaml"}, {Name: "configs/gone.yaml", Link: "real.yaml"}},
			},
			want: []string{
				"abs.yaml=real", "chain.yaml=real", "gone.yaml=real", "hard.yaml=real", "real.yaml=real", "rel.yaml=real",
				"sub/", "sub/x.yaml=x",
			},
			wantFound: true,
		},
		{
			name: "paths cannot climb out",
			sub:  "configs",
			layers: []layerEntries{
				{{Name: "../../configs/a.yaml", Body: "a"}, {Name: "/configs/../configs/b.yaml", Body: "b"}},
			},
			want:      []string{"a.yaml=a", "b.yaml=b"},
			wantFound: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var layers []v1.Layer
			for _, l := range tt.layers {
				layers = append(layers, rendertest.Layer(t, l...))
			}
			img := rendertest.Image(t, nil, layers...)
			root := filepath.Join(t.TempDir(), "tree")
			found, err := extractTree(context.Background(), img, tt.sub, root, 0)
			if err != nil {
				t.Fatal(err)
			}
			if found != tt.wantFound {
				t.Fatalf("found = %v, want %v", found, tt.wantFound)
			}
			if !found {
				return
			}
			got := snapshot(t, root)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("tree =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestExtractTreeBound: the bytes written, copies of links and files
// written again included, stop at the bound, so that an image of zeros
// compressed a thousandfold cannot fill the disk.
func TestExtractTreeBound(t *testing.T) {
	kb := strings.Repeat("0", 1000)
	tests := []struct {
		name    string
		layers  []layerEntries
		max     int64
		wantErr bool
	}{
		{"within the bound", []layerEntries{{{Name: "a", Body: kb}, {Name: "b", Body: kb}}}, 2000, false},
		{"past the bound", []layerEntries{{{Name: "a", Body: kb}, {Name: "b", Body: kb}, {Name: "c", Body: kb}}}, 2500, true},
		{"links copied past the bound", []layerEntries{{{Name: "a", Body: kb}, {Name: "l1", Link: "a"}, {Name: "l2", Link: "a"}, {Name: "l3", HardLink: "a"}}}, 2500, true},
		{"a file written in every layer", []layerEntries{{{Name: "a", Body: kb}}, {{Name: "a", Body: kb}}, {{Name: "a", Body: kb}}}, 2500, true},
		{"no bound", []layerEntries{{{Name: "a", Body: kb}, {Name: "b", Body: kb}, {Name: "c", Body: kb}}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var layers []v1.Layer
			for _, l := range tt.layers {
				layers = append(layers, rendertest.Layer(t, l...))
			}
			img := rendertest.Image(t, nil, layers...)
			_, err := extractTree(context.Background(), img, "", filepath.Join(t.TempDir(), "tree"), tt.max)
			var tooLarge *TooLargeError
			if got := errors.As(err, &tooLarge); got != tt.wantErr {
				t.Errorf("err = %v, want a *TooLargeError: %v", err, tt.wantErr)
			}
		})
	}
}

package provider

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestFilesRelativeToRoot(t *testing.T) {
	root := t.TempDir()
	f, err := newFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		want    string
		wantErr string
	}{
		{path: "a.txt", want: "a.txt"},
		{path: "dir/../b/c.txt", want: "b/c.txt"},
		{path: filepath.Join(root, "d", "e.txt"), want: "d/e.txt"},
		{path: "", wantErr: "must not be empty"},
		{path: ".", wantErr: "names root"},
		{path: "../outside.txt", wantErr: "escapes root"},
		{path: "a/../../outside.txt", wantErr: "escapes root"},
		{path: "/etc/passwd", wantErr: "escapes root"},
		{path: root + "-sibling/x", wantErr: "escapes root"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := f.relative(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("relative(%q) = %q, %v; want error containing %q", tt.path, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != filepath.FromSlash(tt.want) {
				t.Fatalf("relative(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
			}
		})
	}
}

func TestFilesWriteReadRemoveUnderRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "not-yet-created")
	f, err := newFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadFile("x/y.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile before the root exists: %v; want fs.ErrNotExist", err)
	}
	if err := f.WriteFile("x/y.txt", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(root, "x", "y.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != fileMode {
		t.Errorf("mode = %v, want %v", info.Mode().Perm(), fileMode)
	}
	data, err := f.ReadFile("x/y.txt")
	if err != nil || string(data) != "hello" {
		t.Fatalf("ReadFile = %q, %v; want hello", data, err)
	}
	if err := f.Remove("x/y.txt"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove("x/y.txt"); err != nil {
		t.Fatalf("second Remove: %v; want nil", err)
	}
	if _, err := f.ReadFile("x/y.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile after Remove: %v; want fs.ErrNotExist", err)
	}
}

func TestFilesRefuseSymlinkOutOfRoot(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, dirMode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	f, err := newFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("link/x.txt", []byte("no")); err == nil {
		t.Fatal("WriteFile through a symlink out of the root succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a file appeared outside the root: %v", err)
	}
}

func TestFilesWithoutRootUsePathsAsGiven(t *testing.T) {
	f, err := newFiles("")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "a", "b.txt")
	if err := f.WriteFile(p, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(p); err != nil || string(data) != "x" {
		t.Fatalf("file = %q, %v; want x", data, err)
	}
	if err := f.Check(""); err == nil {
		t.Fatal("Check(\"\") succeeded")
	}
}

func TestSplitContent(t *testing.T) {
	tests := []struct {
		name        string
		secret      types.String
		text        string
		wantContent string
		wantSecret  types.String
	}{
		{name: "no secret", secret: types.StringNull(), text: "abc", wantContent: "abc", wantSecret: types.StringNull()},
		{name: "secret intact", secret: types.StringValue("S"), text: "abcS", wantContent: "abc", wantSecret: types.StringValue("S")},
		{name: "content edited", secret: types.StringValue("S"), text: "xyzS", wantContent: "xyz", wantSecret: types.StringValue("S")},
		{name: "secret edited", secret: types.StringValue("S"), text: "abcT", wantContent: "abcT", wantSecret: types.StringNull()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := fileModel{SensitiveContent: tt.secret}
			splitContent(&m, tt.text)
			if m.Content.ValueString() != tt.wantContent || !m.SensitiveContent.Equal(tt.wantSecret) {
				t.Fatalf("content, secret = %q, %v; want %q, %v", m.Content.ValueString(), m.SensitiveContent, tt.wantContent, tt.wantSecret)
			}
		})
	}
}

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	content = "hello from magos\n"
	secret  = "s3cret-value\n"
)

// TestFileDrift drives the real OpenTofu through a magostest_file's life:
// install from the mirror, create, drift by an outside edit, repair,
// re-create after an outside delete, destroy.
func TestFileDrift(t *testing.T) {
	root := filepath.Join(t.TempDir(), "managed")
	w := newWorkdir(t, mainTF(
		fmt.Sprintf("provider \"magostest\" {\n  root = %q\n}", root),
		`resource "magostest_file" "example" {
  path              = "nested/dir/example.txt"
  content           = "hello from magos\n"
  sensitive_content = "s3cret-value\n"
}

data "magostest_file" "example" {
  path = magostest_file.example.path
}

output "id" {
  value = magostest_file.example.id
}

output "sha256" {
  value = magostest_file.example.sha256
}

output "read_back_sha256" {
  value = data.magostest_file.example.sha256
}`))
	file := filepath.Join(root, "nested", "dir", "example.txt")

	out := w.must(0, "init")
	// A filesystem mirror carries no signature, hence "unauthenticated".
	if !strings.Contains(out, "Installed magos/magostest v"+providerVersion+" (unauthenticated)") {
		t.Errorf("init did not install magos/magostest v%s from the mirror:\n%s", providerVersion, out)
	}
	lock, err := os.ReadFile(filepath.Join(w.dir, ".terraform.lock.hcl"))
	if err != nil || !strings.Contains(string(lock), `provider "registry.opentofu.org/magos/magostest"`) {
		t.Fatalf("lock file does not pin the provider (%v):\n%s", err, lock)
	}

	out = w.must(0, "apply", "-auto-approve")
	if strings.Contains(out, strings.TrimSpace(secret)) {
		t.Errorf("apply printed the sensitive content:\n%s", out)
	}
	requireFile(t, file, content+secret)
	info, err := os.Stat(file)
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("file mode = %v (%v), want 0644", info.Mode().Perm(), err)
	}
	outputs := w.outputs()
	sum := sha256.Sum256([]byte(content + secret))
	if want := hex.EncodeToString(sum[:]); outputs["sha256"] != want || outputs["read_back_sha256"] != want {
		t.Errorf("sha256 outputs = %q, %q; want %q", outputs["sha256"], outputs["read_back_sha256"], want)
	}
	if outputs["id"] != "nested/dir/example.txt" {
		t.Errorf("id = %q, want the configured path", outputs["id"])
	}
	w.must(0, "plan", "-detailed-exitcode")

	// Someone edits the file outside OpenTofu: the re-plan sees the drift.
	if err := os.WriteFile(file, []byte("edited out of band\n"+secret), 0o644); err != nil {
		t.Fatal(err)
	}
	out = w.must(2, "plan", "-detailed-exitcode")
	for _, want := range []string{
		"magostest_file.example will be updated in-place",
		"~ content",
		"- edited out of band",
		"+ hello from magos",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("drift plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, strings.TrimSpace(secret)) {
		t.Errorf("drift plan printed the sensitive content:\n%s", out)
	}
	w.must(0, "apply", "-auto-approve")
	requireFile(t, file, content+secret)
	w.must(0, "plan", "-detailed-exitcode")

	// Someone deletes the file: it leaves the state and is planned anew.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	out = w.must(2, "plan", "-detailed-exitcode")
	if !strings.Contains(out, "magostest_file.example will be created") {
		t.Errorf("plan after an outside delete does not re-create the file:\n%s", out)
	}
	w.must(0, "apply", "-auto-approve")
	requireFile(t, file, content+secret)

	w.must(0, "destroy", "-auto-approve")
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("file still there after destroy: %v", err)
	}
	if out := w.must(0, "state", "list"); strings.TrimSpace(out) != "" {
		t.Fatalf("state not empty after destroy:\n%s", out)
	}
}

// outputs returns the workdir's string outputs.
func (w *workdir) outputs() map[string]string {
	w.t.Helper()
	out := w.must(0, "output", "-json")
	var raw map[string]struct {
		Value any `json:"value"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		w.t.Fatalf("decoding outputs: %v\n%s", err, out)
	}
	values := map[string]string{}
	for k, v := range raw {
		values[k] = fmt.Sprint(v.Value)
	}
	return values
}

// requireFile fails the test unless path holds exactly want.
func requireFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s = %q, want %q", path, got, want)
	}
}

package planfile

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckSnapshot(t *testing.T) {
	root := t.TempDir()
	configDir := filepath.Join(root, "infra")
	writeFile(t, configDir, "main.tf", "root")
	writeFile(t, configDir, "modules/net/main.tf", "net")
	writeFile(t, root, "shared/main.tf", "shared")
	writeFile(t, configDir, ".terraform/modules/vpc/main.tf", "vpc")
	writeFile(t, configDir, ".terraform/modules/modules.json",
		`{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"vpc","Source":"registry.opentofu.org/x/vpc/aws","Version":"1.0.0","Dir":".terraform/modules/vpc"}]}`)
	rootMod := Module{Key: "", Dir: ".", Files: map[string][]byte{"main.tf": []byte("root")}}
	net := Module{Key: "net", Source: "./modules/net", Dir: "modules/net", Files: map[string][]byte{"main.tf": []byte("net")}}
	shared := Module{Key: "net.shared", Source: "../../../shared", Dir: "../shared", Files: map[string][]byte{"main.tf": []byte("shared")}}
	vpc := Module{Key: "vpc", Source: "registry.opentofu.org/x/vpc/aws", Dir: ".terraform/modules/vpc", Files: map[string][]byte{"main.tf": []byte("vpc")}}
	with := func(m Module, change func(*Module)) Module {
		files := map[string][]byte{}
		for k, v := range m.Files {
			files[k] = v
		}
		m.Files = files
		change(&m)
		return m
	}
	for _, tc := range []struct {
		name    string
		modules []Module
		wantErr string
	}{
		{name: "local, parent-relative and installed modules", modules: []Module{rootMod, net, shared, vpc}},
		{name: "a module recorded in another directory", modules: []Module{rootMod, with(net, func(m *Module) { m.Dir = "/etc" })},
			wantErr: `module "net" is recorded in directory "/etc", not "modules/net"`},
		{name: "a module outside the artifact", modules: []Module{rootMod, with(net, func(m *Module) { m.Source = "../../../.."; m.Dir = "../../../.." })},
			wantErr: "outside the artifact"},
		{name: "an installed module from another source", modules: []Module{rootMod, with(vpc, func(m *Module) { m.Source = "git::https://x/evil" })},
			wantErr: "is not the module init installed"},
		{name: "a file's bytes differ", modules: []Module{with(rootMod, func(m *Module) { m.Files["main.tf"] = []byte("other") })},
			wantErr: "main.tf of module (root) differs"},
		{name: "a file missing from the snapshot", modules: []Module{rootMod, with(net, func(m *Module) { delete(m.Files, "main.tf") })},
			wantErr: `module "net" has files none in the plan, main.tf in the configuration`},
		{name: "a module without its parent", modules: []Module{rootMod, shared},
			wantErr: "has no parent module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&File{Modules: tc.modules}).CheckSnapshot(root, configDir)
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrMismatch)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
	assert.True(t, (&File{Modules: []Module{rootMod, vpc}}).NeedsInstalledModules())
	assert.False(t, (&File{Modules: []Module{rootMod, net}}).NeedsInstalledModules())
}

package setup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGoMemoryLimit(t *testing.T) {
	noEnv := func(string) string { return "" }
	tests := []struct {
		name  string
		files map[string]string
		env   func(string) string
		want  int64
		set   bool
	}{
		{name: "cgroup v2 limit", files: map[string]string{"memory.max": "536870912\n"}, env: noEnv, want: 483183820, set: true},
		{name: "cgroup v1 limit", files: map[string]string{"memory/memory.limit_in_bytes": "419430400\n"}, env: noEnv, want: 377487360, set: true},
		{name: "cgroup v2 without a limit", files: map[string]string{"memory.max": "max\n"}, env: noEnv},
		{name: "cgroup v1 without a limit", files: map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, env: noEnv},
		{name: "no cgroup memory files", env: noEnv},
		{name: "GOMEMLIMIT set wins", files: map[string]string{"memory.max": "536870912\n"},
			env: func(k string) string { return map[string]string{"GOMEMLIMIT": "300MiB"}[k] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tt.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
			}
			got, set, err := goMemoryLimit(root, tt.env)
			require.NoError(t, err)
			assert.Equal(t, tt.set, set)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestGoMemoryLimitRefusesWhatIsNotANumber(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "memory.max"), []byte("lots\n"), 0o644))
	_, _, err := goMemoryLimit(root, func(string) string { return "" })
	assert.Error(t, err)
}

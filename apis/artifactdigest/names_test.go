package artifactdigest

import "testing"

func TestCleanEntryName(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		ok         bool
	}{
		{"envs/dev/main.tf", "envs/dev/main.tf", true},
		{"./envs//dev/./main.tf", "envs/dev/main.tf", true},
		{"./", ".", true},
		{"", "", false},
		{"/etc/passwd", "", false},
		{"envs/../../x", "", false},
		{"a\\b", "", false},
		{"a\x00b", "", false},
	} {
		got, err := CleanEntryName(tt.name)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("CleanEntryName(%q) = %q, %v; want %q, ok %v", tt.name, got, err, tt.want, tt.ok)
		}
	}
}

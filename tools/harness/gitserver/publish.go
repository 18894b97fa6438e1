package gitserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Publish commits the files of dir as the new content of repository name
// (creating it), on branch main, and returns the commit.
func (s *Server) Publish(name, dir string) (string, error) {
	if err := s.ensureRoot(); err != nil {
		return "", err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	repo := s.repoPath(name)
	if _, err := os.Stat(repo); os.IsNotExist(err) {
		if _, err := s.run("", "init", "--quiet", "--bare", "--initial-branch=main", repo); err != nil {
			return "", err
		}
	}
	steps := [][]string{
		{"--git-dir", repo, "--work-tree", dir, "add", "--all", "."},
		{"--git-dir", repo, "--work-tree", dir, "-c", "user.name=magos", "-c", "user.email=magos@example.invalid",
			"commit", "--quiet", "--allow-empty", "-m", "publish " + name},
	}
	// A bare repository with a work tree: the index lives in the bare
	// repository, so each publish replaces the tree with dir's content.
	for _, args := range steps {
		if _, err := s.run(dir, args...); err != nil {
			return "", err
		}
	}
	out, err := s.run(dir, "--git-dir", repo, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

func (s *Server) run(dir string, args ...string) (string, error) {
	cmd := exec.Command(s.git, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

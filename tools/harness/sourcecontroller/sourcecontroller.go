// Package sourcecontroller runs Flux's own source-controller (built by
// `make flux` into bin/flux) as a process against a local control plane,
// with a Git server it clones from: a test publishes a directory as a
// commit, and source-controller clones it and makes the GitRepository's
// artifact, as on a cluster with Flux.
//
//	sc, err := sourcecontroller.Start(sourcecontroller.Options{Kubeconfig: env.Kubeconfig})
//	rev, err := sc.Publish(ctx, c, types.NamespacedName{Namespace: ns, Name: "infra"}, dir)
//	// rev is main@sha1:<commit>, the GitRepository's artifact revision
//
// Instances split the GitRepositories between them with Flux's sharding
// label (sharding.fluxcd.io/key), as Flux's own shards do: the default
// instance reconciles objects without the label, an instance with a Shard
// only those labelled with it, and objects labelled with a shard no
// instance serves are left to whoever writes their status.
package sourcecontroller

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/magos-dev/magos/tools/harness/gitserver"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// ShardLabel is Flux's sharding label: a controller started with
// --watch-label-selector=sharding.fluxcd.io/key=X reconciles only the
// objects labelled X.
const ShardLabel = "sharding.fluxcd.io/key"

// Options configure an instance.
type Options struct {
	// Kubeconfig reaches the control plane as an admin.
	Kubeconfig string
	// DigestAlgorithm is its --artifact-digest-algo: sha256 (the
	// default), sha384, sha512 or blake3.
	DigestAlgorithm string
	// Shard, if set, is the sharding label value this instance reconciles;
	// empty: every object without the label.
	Shard string
	// Log receives the controller's JSON log lines. Default: discarded.
	Log io.Writer
}

// Controller is a running source-controller and the Git server it clones
// from.
type Controller struct {
	opts Options
	// Version is source-controller's version (the Makefile's pin).
	Version string
	// StorageURL is where it serves artifacts (its --storage-adv-addr).
	StorageURL string

	cmd     *exec.Cmd
	exited  chan struct{}
	git     *gitserver.Server
	gitURL  string
	gitStop net.Listener
	dir     string
	// mu serialises publishes to one repository's bare Git directory.
	mu sync.Mutex
}

// Binary is the path of the source-controller `make flux` builds.
func Binary(root string) (path, version string, err error) {
	version, err = testenv.MakeVariable(root, "FLUX_SOURCE_CONTROLLER_VERSION")
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(root, "bin", "flux", "source-controller-"+version)
	if _, err := os.Stat(path); err != nil {
		return "", "", fmt.Errorf("source-controller v%s is not built: run `make flux` (%w)", version, err)
	}
	return path, version, nil
}

// Start starts a Git server and source-controller, and returns once
// source-controller serves its artifact storage.
func Start(opts Options) (*Controller, error) {
	if opts.Kubeconfig == "" {
		return nil, errors.New("sourcecontroller: a kubeconfig is required")
	}
	if opts.DigestAlgorithm == "" {
		opts.DigestAlgorithm = "sha256"
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	bin, version, err := Binary(root)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "magos-source-controller-")
	if err != nil {
		return nil, err
	}
	c := &Controller{opts: opts, Version: version, dir: dir, exited: make(chan struct{})}
	if err := os.Mkdir(filepath.Join(dir, "storage"), 0o755); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	if err := c.startGit(); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	storage, err := freeLoopbackAddr()
	if err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	c.StorageURL = "http://" + storage
	args := []string{
		"--storage-path=" + filepath.Join(dir, "storage"),
		"--storage-addr=" + storage,
		"--storage-adv-addr=" + storage,
		"--artifact-digest-algo=" + opts.DigestAlgorithm,
		"--metrics-addr=0",
		"--health-addr=0",
		"--enable-leader-election=false",
		"--watch-all-namespaces=true",
		"--concurrent=4",
		"--log-encoding=json",
		"--log-level=info",
	}
	if opts.Shard != "" {
		args = append(args, "--watch-label-selector="+ShardLabel+"="+opts.Shard)
	} else {
		args = append(args, "--watch-label-selector=!"+ShardLabel)
	}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Env = append(os.Environ(), "KUBECONFIG="+opts.Kubeconfig, "RUNTIME_NAMESPACE=flux-system", "TMPDIR="+dir)
	logFile, err := os.Create(filepath.Join(dir, "source-controller.log"))
	if err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	c.cmd.Stdout = io.MultiWriter(opts.Log, logFile)
	c.cmd.Stderr = c.cmd.Stdout
	// The controller ends with the test binary, even one that is killed.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, errors.Join(fmt.Errorf("starting source-controller: %w", err), c.Stop())
	}
	go func() { _ = c.cmd.Wait(); _ = logFile.Close(); close(c.exited) }()
	if err := c.awaitStorage(storage, time.Minute); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// startGit serves the Git repositories tests publish, to anyone, on
// loopback.
func (c *Controller) startGit() error {
	git, err := gitserver.New(filepath.Join(c.dir, "git"), "", "")
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = git.ServeHTTP(l) }()
	c.git, c.gitStop, c.gitURL = git, l, "http://"+l.Addr().String()
	return nil
}

// awaitStorage waits until the artifact server accepts connections.
func (c *Controller) awaitStorage(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-c.exited:
			return fmt.Errorf("source-controller exited before serving its storage: %v: %s", c.cmd.ProcessState, c.logTail())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("source-controller did not serve its storage on %s within %s", addr, timeout)
		}
	}
}

// Stop ends source-controller and the Git server and removes their files.
func (c *Controller) Stop() error {
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	}
	if c.gitStop != nil {
		_ = c.gitStop.Close()
	}
	return os.RemoveAll(c.dir)
}

// freeLoopbackAddr is a loopback address with a port free at the moment.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// logTail is the end of source-controller's log, for an error.
func (c *Controller) logTail() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "source-controller.log"))
	const max = 2000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// LogAbout is what source-controller logged about objects of namespace ns,
// for a failed test.
func (c *Controller) LogAbout(ns string) string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "source-controller.log"))
	var out []string
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, `"namespace":"`+ns+`"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

package realnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/magos-dev/magos/tools/harness/realnode"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// probeImage is the image of testdata/probe the tests build.
const probeImage = "magos.test/probe:1"

var (
	// node is the cluster every test of the package runs on; nil when the
	// machine cannot run one (startErr says why).
	node     *realnode.Node
	startErr error
	// k8s is an admin client of node.
	k8s client.Client
	// binDir holds the node's binaries.
	binDir string
	// imagesDir holds the archives of `make images` (or $MAGOS_IMAGES_DIR).
	imagesDir string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	root, err := testenv.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir = filepath.Join(root, "bin", "k8s")
	imagesDir = filepath.Join(root, "bin", "images")
	if dir := os.Getenv("MAGOS_IMAGES_DIR"); dir != "" {
		imagesDir = dir
	}
	if realnode.Available(binDir) != nil {
		// Every test calls requireNode, which skips or fails with the reason.
		return m.Run()
	}
	startErr = startNode(root)
	code := m.Run()
	if node != nil {
		if err := node.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the node:", err)
			code = 1
		}
		if left := node.Leftovers(); len(left) > 0 {
			fmt.Fprintln(os.Stderr, "the node left things on the host:", left)
			code = 1
		}
	}
	return code
}

// startNode builds the probe image and starts the node with it and the
// pause image of `make images`.
func startNode(root string) error {
	images, err := os.MkdirTemp("", "magos-realnode-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(images)
	probe := filepath.Join(images, "probe.tar")
	if err := buildImage(probe, probeImage, "./testdata/probe"); err != nil {
		return err
	}
	version, err := magosVersion(root)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if node, err = realnode.Start(ctx, realnode.Options{
		BinDir:     binDir,
		PauseImage: realnode.Image{Name: "ghcr.io/magos-dev/magos-pause:" + version, Archive: filepath.Join(imagesDir, "magos-pause.tar")},
		Images:     []string{probe},
		Logf:       func(f string, a ...any) { fmt.Printf(f+"\n", a...) },
	}); err != nil {
		return err
	}
	if rss, err := node.RSS(); err == nil {
		fmt.Printf("realnode: idle node RSS %d MiB\n", rss>>20)
	}
	k8s, err = client.New(node.Config, client.Options{Scheme: testenv.Scheme()})
	return err
}

// buildImage builds the static program in dir and writes it as an image
// run as 65532.
func buildImage(archive, name, dir string) error {
	bin := archive + ".bin"
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, dir)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w: %s", dir, err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	path := "/" + filepath.Base(dir)
	return realnode.WriteImage(archive, name, "65532:65532", []string{path}, []realnode.ImageFile{{Path: path, Mode: 0o755, Data: data}})
}

// requireNode skips or fails t when there is no node (see
// realnode.Require).
func requireNode(t *testing.T) {
	t.Helper()
	realnode.Require(t, binDir)
	if startErr != nil {
		t.Fatalf("the node did not start: %v", startErr)
	}
}

// newNamespace creates a namespace for one test, waits for its default
// ServiceAccount (the controller manager's job) and deletes it afterwards.
func newNamespace(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	testenv.WaitFor(t, k8s, client.ObjectKey{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{},
		30*time.Second, 100*time.Millisecond, func(*corev1.ServiceAccount) bool { return true },
		"the default ServiceAccount was not created")
	return ns.Name
}

// magosVersion is the chart's appVersion: the tag of the images `make
// images` builds.
func magosVersion(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "charts", "magos", "Chart.yaml"))
	if err != nil {
		return "", err
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &chart); err != nil {
		return "", err
	}
	if chart.AppVersion == "" {
		return "", errors.New("charts/magos/Chart.yaml has no appVersion")
	}
	return chart.AppVersion, nil
}

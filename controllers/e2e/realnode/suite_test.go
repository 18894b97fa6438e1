package realnode

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/realnode"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

const (
	// probeImage is the image of testdata/probe the tests build.
	probeImage = "magos.test/probe:1"
	// slowRunnerImage is a runner image of a user's own: the runner and
	// testdata/sleep, for configurations that must apply slowly.
	slowRunnerImage = "magos.test/slow-runner:1"
)

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
	flag.Parse()
	if testing.Short() {
		// Every test calls requireNode, which skips with -short.
		return m.Run()
	}
	// envtest, which installs the neighbours' CRDs, logs through
	// controller-runtime; the tests have nothing to say there.
	ctrl.SetLogger(logr.Discard())
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
	stopEnforcer()
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

// startNode builds the test images and starts the node with them, the
// pause image and every Magos image of `make images`.
func startNode(root string) error {
	images, err := os.MkdirTemp("", "magos-realnode-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(images)
	probe := filepath.Join(images, "probe.tar")
	if err := buildImage(probe, probeImage, program{"/probe", "./testdata/probe"}); err != nil {
		return err
	}
	slowRunner := filepath.Join(images, "slow-runner.tar")
	if err := buildImage(slowRunner, slowRunnerImage,
		program{"/usr/local/bin/runner", filepath.Join(root, "runner")}, program{"/usr/local/bin/sleep", "./testdata/sleep"}); err != nil {
		return err
	}
	version, err := magosVersion(root)
	if err != nil {
		return err
	}
	magosImages, err := filepath.Glob(filepath.Join(imagesDir, "*.tar"))
	if err != nil {
		return err
	}
	if len(magosImages) < 7 {
		return fmt.Errorf("%d image archives in %s, not the 7 of `make images`: run it", len(magosImages), imagesDir)
	}
	// Flux's source-controller and kustomize-controller, built by `make
	// node` from their Go modules.
	sourceController := filepath.Join(imagesDir, "flux", "source-controller.tar")
	kustomizeController := filepath.Join(imagesDir, "flux", "kustomize-controller.tar")
	for _, image := range []string{sourceController, kustomizeController} {
		if _, err := os.Stat(image); err != nil {
			return fmt.Errorf("a Flux controller's image: %w: run `make node`", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if node, err = realnode.Start(ctx, realnode.Options{
		BinDir:     binDir,
		PauseImage: realnode.Image{Name: "ghcr.io/magos-dev/magos-pause:" + version, Archive: filepath.Join(imagesDir, "magos-pause.tar")},
		Images:     append([]string{probe, slowRunner, sourceController, kustomizeController}, magosImages...),
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

// program is a Go main package built into an image at path.
type program struct{ path, pkg string }

// buildImage builds the static programs and writes them as one image,
// run as 65532, whose entrypoint is the first.
func buildImage(archive, name string, programs ...program) error {
	var files []realnode.ImageFile
	for _, p := range programs {
		bin := archive + "." + filepath.Base(p.path)
		cmd := exec.Command("go", "build", "-trimpath", "-o", bin, p.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %w: %s", p.pkg, err, out)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		files = append(files, realnode.ImageFile{Path: p.path, Mode: 0o755, Data: data})
	}
	return realnode.WriteImage(archive, name, "65532:65532", []string{programs[0].path}, files)
}

// requireNode skips or fails t when there is no node (see
// realnode.Require).
func requireNode(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("the real-node tier does not run with -short: run `make test`")
	}
	realnode.Require(t, binDir)
	if startErr != nil {
		t.Fatalf("the node did not start: %v", startErr)
	}
}

// newNamespace creates a namespace for one test, waits for its default
// ServiceAccount (the controller manager's job) and deletes it afterwards.
func newNamespace(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	logNamespaceOnFailure(t, ns.Name)
	testenv.WaitFor(t, k8s, client.ObjectKey{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{},
		30*time.Second, 100*time.Millisecond, func(*corev1.ServiceAccount) bool { return true },
		"the default ServiceAccount was not created")
	return ns.Name
}

// logNamespaceOnFailure logs, when t fails, what happened in namespace ns:
// its Events in order and every Workspace's runs (job, result, reason,
// message), which say why a run ended where a test waited for another.
func logNamespaceOnFailure(t testing.TB, ns string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx := context.Background()
		var events corev1.EventList
		if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
			t.Logf("listing the Events of %s: %v", ns, err)
		}
		sort.SliceStable(events.Items, func(i, j int) bool {
			return eventTime(&events.Items[i]).Before(eventTime(&events.Items[j]))
		})
		for _, e := range events.Items {
			t.Logf("event %s %s/%s %s: %s (x%d)", eventTime(&e).UTC().Format(time.RFC3339), e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message, max(e.Count, 1))
		}
		var wss magosv1.WorkspaceList
		if err := k8s.List(ctx, &wss, client.InNamespace(ns)); err != nil {
			t.Logf("listing the Workspaces of %s: %v", ns, err)
		}
		for _, ws := range wss.Items {
			t.Logf("workspace %s: phase %s, plan %+v, last applied %+v", ws.Name, ws.Status.Phase, ws.Status.Plan, ws.Status.LastApplied)
			runs := ws.Status.History
			if cr := ws.Status.CurrentRun; cr != nil {
				runs = append([]magosv1.RunStatus{*cr}, runs...)
			}
			for _, r := range runs {
				t.Logf("workspace %s run %s (%s, plan %s): %s %s: %s", ws.Name, r.Job, r.Phase, r.PlanID, r.Result, r.Reason, r.Message)
			}
		}
	})
}

// eventTime is when e last happened.
func eventTime(e *corev1.Event) time.Time {
	for _, t := range []time.Time{e.LastTimestamp.Time, e.EventTime.Time, e.FirstTimestamp.Time} {
		if !t.IsZero() {
			return t
		}
	}
	return e.CreationTimestamp.Time
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

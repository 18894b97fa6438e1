package realnode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// loadWorkspaces is how many Workspaces BenchmarkLoadOnTheNode applies at
// once.
const loadWorkspaces = 100

// BenchmarkLoadOnTheNode applies 100 Workspaces at once on the node, under
// the chart's default bounds on runs in progress, each a Job of the real
// runner with the engine from its image, all reading one source-controller
// artifact. It prints the time until every one is applied, the
// controllers' CPU and memory as the kubelet measures them, and, once the
// Workspaces are deleted, the time until the garbage collector left no Job
// or Pod of theirs. It fails if a Workspace is not applied or anything is
// left behind.
func BenchmarkLoadOnTheNode(b *testing.B) {
	requireMagos(b)
	ctx := context.Background()
	for range b.N {
		ns := newNamespace(b)
		dir := b.TempDir()
		testenv.WriteWideConfig(b, dir, 10, 0)
		rev := newGitSource(b, ns).Publish(ctx, "infra", dir)

		cpuBefore := controllerFigures(b, "container_cpu_usage_seconds_total")
		start := time.Now()
		for i := range loadWorkspaces {
			if err := k8s.Create(ctx, &magosv1.Workspace{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("load-%03d", i), Namespace: ns},
				Spec:       magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}},
			}); err != nil {
				b.Fatal(err)
			}
		}
		var first time.Duration
		waitUntil(b, 30*time.Minute, time.Second, func() (bool, string) {
			var list magosv1.WorkspaceList
			if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err.Error()
			}
			done := 0
			for i := range list.Items {
				if applied(rev)(&list.Items[i]) {
					done++
				}
			}
			if done > 0 && first == 0 {
				first = time.Since(start)
			}
			return done == loadWorkspaces, fmt.Sprintf("%d of %d Workspaces applied", done, loadWorkspaces)
		})
		all := time.Since(start)
		cpuAfter := controllerFigures(b, "container_cpu_usage_seconds_total")
		peak := controllerFigures(b, "container_memory_max_usage_bytes")
		working := controllerFigures(b, "container_memory_working_set_bytes")

		deleted := time.Now()
		if err := k8s.DeleteAllOf(ctx, &magosv1.Workspace{}, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		waitUntil(b, 10*time.Minute, time.Second, func() (bool, string) {
			var jobs batchv1.JobList
			var pods corev1.PodList
			var wss magosv1.WorkspaceList
			if err := k8s.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
				return false, err.Error()
			}
			if err := k8s.List(ctx, &pods, client.InNamespace(ns)); err != nil {
				return false, err.Error()
			}
			if err := k8s.List(ctx, &wss, client.InNamespace(ns)); err != nil {
				return false, err.Error()
			}
			return len(jobs.Items)+len(pods.Items)+len(wss.Items) == 0,
				fmt.Sprintf("%d Workspaces, %d Jobs and %d Pods left", len(wss.Items), len(jobs.Items), len(pods.Items))
		})
		gone := time.Since(deleted)

		b.ReportMetric(all.Seconds(), "s-to-all-applied")
		fmt.Printf("%s: %d Workspaces (10 terraform_data each, the fast path) applied on the node in %s, the first after %s (%.2f s per Workspace); "+
			"deleted, nothing of them left after %s\n", b.Name(), loadWorkspaces, all.Round(time.Second), first.Round(time.Second),
			all.Seconds()/loadWorkspaces, gone.Round(time.Second))
		for _, name := range controllerNames {
			fmt.Printf("%s: %s-controller CPU %.1f s over the load (%.0f%% of a core), peak memory %.0f MiB, working set after %.0f MiB\n",
				b.Name(), name, cpuAfter[name]-cpuBefore[name], 100*(cpuAfter[name]-cpuBefore[name])/all.Seconds(),
				peak[name]/(1<<20), working[name]/(1<<20))
		}
	}
}

// controllerFigures is a cAdvisor metric summed per controller
// (magosContainers by Deployment).
func controllerFigures(t testing.TB, metric string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for pod, v := range magosContainers(t, metric) {
		for _, name := range controllerNames {
			if strings.HasPrefix(pod, "magos-"+name+"-controller-") {
				out[name] += v
			}
		}
	}
	return out
}

// waitUntil polls cond every interval until it holds, failing after timeout
// with what cond last said.
func waitUntil(t testing.TB, timeout, interval time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, said := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", timeout, said)
		}
		time.Sleep(interval)
	}
}

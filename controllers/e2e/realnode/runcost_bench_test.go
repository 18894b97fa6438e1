package realnode

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// BenchmarkRevisionOnTheNode is the e2e package's BenchmarkRevision on
// the real node: raw OpenTofu init+plan+apply of 200 and of 1,000
// terraform_data on the host, against Magos on the node (the real job
// controller, kubelet and containerd, the runner image, the engine copied
// by the init container) from source-controller's artifact of a new
// commit to Applied and Ready, both measured in the same run. The fast
// path for both sizes; the gated path (one passing policy, approval Auto)
// for 1,000. Source-controller's own time to make the artifact is printed
// apart and not counted: Magos starts when the artifact is there.
func BenchmarkRevisionOnTheNode(b *testing.B) {
	for _, c := range []struct {
		resources int
		gated     bool
	}{{200, false}, {1000, false}, {1000, true}} {
		path := "fast"
		if c.gated {
			path = "gated"
		}
		b.Run(fmt.Sprintf("%d-%s", c.resources, path), func(b *testing.B) { benchRevisionOnTheNode(b, c.resources, c.gated) })
	}
}

func benchRevisionOnTheNode(b *testing.B, resources int, gated bool) {
	requireMagos(b)
	root, err := testenv.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ns := newNamespace(b)
	src := newGitSource(b, ns)
	magosDir, rawDir := b.TempDir(), b.TempDir()
	testenv.WriteWideConfig(b, magosDir, resources, 0)
	rev := src.Publish(ctx, "wide", magosDir)
	ws := &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "wide", Namespace: ns},
		Spec:       magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "wide"}},
	}
	if gated {
		labels := everyPlanPolicy(b, "pass", ns, "true", "every plan passes")
		ws.Spec.Policy = &magosv1.PolicySpec{Selector: &metav1.LabelSelector{MatchLabels: labels}}
	}
	if err := k8s.Create(ctx, ws); err != nil {
		b.Fatal(err)
	}
	waitWorkspace(b, ns, "wide", 10*time.Minute, "applies the first revision", applied(rev))
	testenv.WriteWideConfig(b, rawDir, resources, 0)
	testenv.RawTofu(b, root, rawDir)

	var raw testenv.RawTimes
	var artifact, magos, engine time.Duration
	var segments []testenv.RunSegment
	jobs, timed := 0, 0
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		testenv.WriteWideConfig(b, rawDir, resources, i)
		took := testenv.RawTofu(b, root, rawDir)
		for j := range raw {
			raw[j] += took[j]
		}

		testenv.WriteWideConfig(b, magosDir, resources, i)
		published := time.Now()
		watching, stop := context.WithCancel(ctx)
		tl := testenv.WatchRun(watching, node.Config, ns, "wide", published)
		rev := src.Publish(ctx, "wide", magosDir)
		start := time.Now()
		artifact += start.Sub(published)
		testenv.WaitFor(b, k8s, client.ObjectKey{Namespace: ns, Name: "wide"}, &magosv1.Workspace{}, 10*time.Minute, 50*time.Millisecond,
			applied(rev), "the new revision applies")
		magos += time.Since(start)
		stop()
		engine += tl.EngineTime()
		if segs := tl.Segments(time.Since(published)); segs != nil {
			segments = testenv.AddSegments(segments, segs)
			timed++
		}
		jobs += runJobs(b, ns, rev)
	}
	b.StopTimer()
	n := float64(b.N)
	rawS, magosS := raw.Total().Seconds()/n, magos.Seconds()/n
	b.ReportMetric(rawS, "raw-tofu-s/op")
	b.ReportMetric(magosS, "magos-s/op")
	b.ReportMetric(magosS/rawS, "magos/raw")
	// Printed rather than logged: a benchmark's log is cut at ten lines.
	fmt.Printf("%s: raw tofu init+plan+apply %.2fs (init %.2fs, plan %.2fs, apply %.2fs); Magos on the node, artifact→Applied %.2fs, ratio %.2f; "+
		"%.0f run Job(s) per revision; source-controller made each artifact in %.2fs (not counted)\n",
		b.Name(), rawS, raw[0].Seconds()/n, raw[1].Seconds()/n, raw[2].Seconds()/n, magosS, magosS/rawS, float64(jobs)/n, artifact.Seconds()/n)
	if timed > 0 {
		fmt.Printf("%s: where the time goes from the publish (mean of %d runs; the engine's own init, plan and apply %.2fs):\n%s",
			b.Name(), timed, engine.Seconds()/n, testenv.FormatSegments(segments, timed))
	}
}

// runJobs is how many run Jobs of namespace ns ran revision rev.
func runJobs(t testing.TB, ns, rev string) int {
	t.Helper()
	var jobs batchv1.JobList
	if err := k8s.List(context.Background(), &jobs, client.InNamespace(ns), client.HasLabels{magosv1.WorkspaceLabel}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range jobs.Items {
		if j.Annotations[magosv1.RevisionAnnotation] == rev {
			n++
		}
	}
	return n
}

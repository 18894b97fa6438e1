package variableset

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

const (
	benchSecrets      = 5000
	benchVariableSets = 2000
	// benchRefs is how many Secret keys each VariableSet references: 2,000
	// × 5 references over 5,000 Secrets, so each Secret is shared by two.
	benchRefs = 5
	// benchRotated is how many Secrets the benchmark rotates afterwards,
	// each used by two VariableSets that use no other rotated Secret.
	benchRotated = 500
)

// BenchmarkVariableSetsAtScale creates 5,000 Secrets and 2,000 VariableSets
// that reference them in the real apiserver, then starts the
// variableset-controller (a cold start, as after a restart) and reports how
// long it takes until every VariableSet is Ready, how long until rotating
// 500 Secrets has changed the digests of the 1,000 VariableSets that use
// them, how many key-name reads went to the apiserver, and the process's
// resident memory (VmRSS) before and after. It runs once, and only with
// -bench:
//
//	go test -run='^$' -bench=VariableSetsAtScale -benchtime=1x ./controllers/internal/variableset/
func BenchmarkVariableSetsAtScale(b *testing.B) {
	ctx := context.Background()
	ns := env.NewNamespace(b)
	cfg := benchConfig()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: setup.Scheme()})
	require.NoError(b, err)

	start := time.Now()
	parallel(b, benchSecrets, func(i int) error {
		return c.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("secret-%04d", i)},
			Data:       map[string][]byte{"password": []byte(fmt.Sprintf("value-%d", i)), "user": []byte("app")},
		})
	})
	parallel(b, benchVariableSets, func(i int) error {
		vs := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("vs-%04d", i)}}
		for j := range benchRefs {
			vs.Spec.Variables = append(vs.Spec.Variables, magosv1.Variable{
				Name:      fmt.Sprintf("v%d", j),
				ValueFrom: secretKey(fmt.Sprintf("secret-%04d", (i*benchRefs+j)%benchSecrets), "password"),
			})
		}
		return c.Create(ctx, vs)
	})
	b.Logf("Created %d Secrets and %d VariableSets in %s", benchSecrets, benchVariableSets, time.Since(start).Round(time.Millisecond))

	readsBefore := testutil.ToFloat64(referenceReads.WithLabelValues(readAPIServer))
	memoBefore := testutil.ToFloat64(referenceReads.WithLabelValues(readMemo))
	rssBefore := vmRSS(b)
	b.ResetTimer()

	start = time.Now()
	stop := startBenchController(b, cfg, ns)
	defer stop()
	digests := waitForVariableSets(b, c, ns, func(map[string]string) bool { return true })
	toReady := time.Since(start)
	reads := testutil.ToFloat64(referenceReads.WithLabelValues(readAPIServer)) - readsBefore
	memoHits := testutil.ToFloat64(referenceReads.WithLabelValues(readMemo)) - memoBefore
	b.Logf("All %d VariableSets Ready %s after the controller started (%d references to %d Secrets: %d key-name reads from the apiserver, %d from the memo)",
		benchVariableSets, toReady.Round(time.Millisecond), benchVariableSets*benchRefs, benchSecrets, int(reads), int(memoHits))

	start = time.Now()
	parallel(b, benchRotated, func(i int) error {
		s := &corev1.Secret{}
		// Secret 5i is the first reference of VariableSets i and 1000+i.
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("secret-%04d", benchRefs*i)}, s); err != nil {
			return err
		}
		s.Data["password"] = []byte(fmt.Sprintf("rotated-%d", i))
		return c.Update(ctx, s)
	})
	waitForVariableSets(b, c, ns, func(now map[string]string) bool {
		changed := 0
		for name, d := range now {
			if d != digests[name] {
				changed++
			}
		}
		return changed == benchRotated*2
	})
	toRotated := time.Since(start)
	b.StopTimer()

	rssAfter := vmRSS(b)
	b.ReportMetric(toReady.Seconds(), "s-to-ready")
	b.ReportMetric(toRotated.Seconds(), "s-to-rotate")
	b.ReportMetric(reads, "apiserver-reads")
	b.ReportMetric(rssBefore/1024, "MiB-rss-before")
	b.ReportMetric(rssAfter/1024, "MiB-rss-after")
	b.Logf("Rotating %d Secrets changed the digests of their %d VariableSets in %s",
		benchRotated, benchRotated*2, toRotated.Round(time.Millisecond))
	b.Logf("VmRSS before the controller started: %.1f MiB; with it running, all Ready: %.1f MiB (%.1f MiB more)",
		rssBefore/1024, rssAfter/1024, (rssAfter-rssBefore)/1024)
}

// benchConfig is the test apiserver's config without client-side rate
// limiting, as the controllers get it from ctrl.GetConfig in production.
func benchConfig() *rest.Config {
	cfg := *env.Config
	cfg.QPS, cfg.Burst = -1, 0
	return &cfg
}

// startBenchController runs the variableset-controller as in production
// (4 workers), watching only ns.
func startBenchController(b *testing.B, cfg *rest.Config, ns string) func() {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 setup.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(b, err)
	require.NoError(b, Register(mgr, setup.Options{WatchNamespaces: []string{ns}, Concurrency: 4}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// waitForVariableSets follows the VariableSets of ns through one watch
// (cheaper for the apiserver and this process than listing 2,000 objects
// over and over) until every one is Ready at its generation and done holds
// for their digests, and returns the digests.
func waitForVariableSets(b *testing.B, c client.WithWatch, ns string, done func(map[string]string) bool) map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		// A watch without a resourceVersion starts with every object; the
		// apiserver may end a watch at any time, so start over when it does.
		w, err := c.Watch(ctx, &magosv1.VariableSetList{}, client.InNamespace(ns))
		require.NoError(b, err)
		digests := map[string]string{}
		for ev := range w.ResultChan() {
			vs, ok := ev.Object.(*magosv1.VariableSet)
			if !ok {
				break
			}
			if ev.Type != watch.Deleted && vs.Status.ObservedGeneration == vs.Generation && conditions.IsTrue(vs, magosv1.ReadyCondition) {
				digests[vs.Name] = vs.Status.InputsDigest
			} else {
				delete(digests, vs.Name)
			}
			if len(digests) == benchVariableSets && done(digests) {
				w.Stop()
				return digests
			}
		}
		w.Stop()
	}
	b.Fatalf("Not every VariableSet was Ready in time")
	return nil
}

// parallel runs f(0..n-1) on 32 workers.
func parallel(b *testing.B, n int, f func(i int) error) {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(b, err)
	}
}

// vmRSS returns the process's resident memory in KiB after a GC that
// returns freed memory to the OS.
func vmRSS(b *testing.B) float64 {
	runtime.GC()
	debug.FreeOSMemory()
	f, err := os.Open("/proc/self/status")
	require.NoError(b, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kib, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			require.NoError(b, err)
			return kib
		}
	}
	b.Fatal("VmRSS not found in /proc/self/status")
	return 0
}

// Command rssprobe reports the resident memory of a process that links
// what a Magos controller links (controller-runtime, client-go, the Magos
// metrics), and, built with -tags policyengine, also the policy gate after
// it evaluated a plan: BenchmarkProcessRSS builds and runs it both ways.
//
//	rssprobe <plan.json> [<policy.yaml>...]
//
// It prints one JSON object: VmRSS at start (after package initialisation)
// and at the end, VmHWM (the peak), the file-backed (binary) and anonymous
// parts of VmRSS at start, and the Go heap in use and memory obtained from
// the OS at start, in KiB.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/magos-dev/magos/controllers/internal/metrics"
)

// evaluate is set by the policyengine build: it loads the policies and
// evaluates the plan once.
var evaluate func(plan []byte, policyFiles []string) (string, error)

// keep links what every controller binary links.
var keep = []any{ctrl.NewManager, clientgoscheme.AddToScheme, metrics.RecordReconcile, schema.GroupVersion{}}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rssprobe <plan.json> [<policy.yaml>...]")
		os.Exit(2)
	}
	_ = keep
	runtime.GC()
	start := status("VmRSS")
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	startHeap, startSys := mem.HeapAlloc/1024, mem.Sys/1024
	startFile, startAnon := status("RssFile"), status("RssAnon")
	plan, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	verdict := ""
	if evaluate != nil {
		if verdict, err = evaluate(plan, os.Args[2:]); err != nil {
			fail(err)
		}
	} else {
		var parsed map[string]any
		if err := json.Unmarshal(plan, &parsed); err != nil {
			fail(err)
		}
		runtime.KeepAlive(parsed)
	}
	runtime.GC()
	out := map[string]any{
		"engine":       evaluate != nil,
		"rssStartKiB":  start,
		"rssEndKiB":    status("VmRSS"),
		"rssPeakKiB":   status("VmHWM"),
		"heapStartKiB": startHeap,
		"sysStartKiB":  startSys,
		// Pages of the binary itself (file) and of the heap and stacks (anon).
		"rssFileStartKiB": startFile,
		"rssAnonStartKiB": startAnon,
		"verdictShort":    verdict,
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

// status reads a KiB figure from /proc/self/status.
func status(field string) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		fail(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				fail(err)
			}
			return n
		}
	}
	fail(fmt.Errorf("%s not in /proc/self/status", field))
	return 0
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "rssprobe:", err)
	os.Exit(1)
}

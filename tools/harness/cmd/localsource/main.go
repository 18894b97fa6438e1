// Command localsource stands in for Flux's source-controller in `make
// demo`: it publishes directories (or local Git repositories) as the
// artifacts of GitRepositories, serves them on the loopback interface, and
// republishes whenever their content changes.
//
//	localsource --kubeconfig bin/demo/kubeconfig \
//	  --source default/infra=deploy/examples/infra --git-source default/app=../app@main
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/magos-dev/magos/tools/harness/localsource"
)

func main() {
	var (
		interval = flag.Duration("interval", 2*time.Second, "how often the sources are checked for changes")
		opts     localsource.Options
		sources  sourcesFlag
	)
	flag.StringVar(&opts.Addr, "addr", "127.0.0.1:0", "address to serve the artifacts on")
	flag.StringVar(&opts.StorageDir, "storage-dir", "", "directory of the artifact files (default: a temporary one)")
	flag.StringVar(&opts.Branch, "branch", "main", "branch named in a directory's revision when the GitRepository names none")
	flag.BoolVar(&opts.CreateMissing, "create-missing", true, "create a GitRepository that does not exist")
	flag.Func("source", "NAMESPACE/NAME=DIR: publish a directory (repeatable)", sources.add(false))
	flag.Func("git-source", "NAMESPACE/NAME=REPO[@REF]: publish a commit of a local Git repository (repeatable)", sources.add(true))
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := run(opts, sources, *interval); err != nil {
		fmt.Fprintln(os.Stderr, "localsource:", err)
		os.Exit(1)
	}
}

func run(opts localsource.Options, sources []localsource.Source, interval time.Duration) error {
	if len(sources) == 0 {
		return errors.New("give at least one --source or --git-source")
	}
	// --kubeconfig (registered by controller-runtime), else KUBECONFIG.
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	srv, err := localsource.New(c, opts)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Close()

	ctx := ctrl.SetupSignalHandler()
	for _, src := range sources {
		rev, _, err := srv.Sync(ctx, src)
		if err != nil {
			return err
		}
		fmt.Printf("Published %s as %s (revision %s)\n", src.Dir, src.Key, rev)
	}
	fmt.Printf("Serving artifacts at %s; watching every %s\n", srv.URL(), interval)
	var wg sync.WaitGroup
	for _, src := range sources {
		wg.Go(func() { srv.Watch(ctx, src, interval) })
	}
	wg.Wait()
	return nil
}

// sourcesFlag collects the sources to publish.
type sourcesFlag []localsource.Source

func (s *sourcesFlag) add(git bool) func(string) error {
	return func(v string) error {
		ref, dir, ok := strings.Cut(v, "=")
		ns, name, okRef := strings.Cut(ref, "/")
		if !ok || !okRef || ns == "" || name == "" || dir == "" {
			return fmt.Errorf("%q is not NAMESPACE/NAME=DIR", v)
		}
		src := localsource.Source{Key: types.NamespacedName{Namespace: ns, Name: name}, Dir: dir, Git: git}
		if git {
			if d, r, ok := strings.Cut(dir, "@"); ok {
				src.Dir, src.Ref = d, r
			}
		}
		*s = append(*s, src)
		return nil
	}
}

package command

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ui"
)

// The local UI (package ui): this command checks its flags, makes the
// clients from kubeconfig, listens on loopback (another address needs
// --allow-remote), prints the URL and serves until interrupted.

type uiOptions struct {
	address     string
	port        int
	noBrowser   bool
	allNS       bool
	allowRemote bool
}

func newUICommand(f *factory) *cobra.Command {
	o := &uiOptions{}
	cmd := &cobra.Command{
		Use:   "ui [--port N] [--no-browser] [-n NS | -A]",
		Short: "Serve a local web UI for plans, approvals and Rollouts, with your own credentials",
		Long: `Serve a web UI on 127.0.0.1 that reads and acts with your kubeconfig's
credentials: the apiserver's RBAC decides what you see and may do, as with
kubectl. Open the URL it prints: its code opens a session once, within 5
minutes; --no-browser does not open it for you.

Pages: an overview of Projects, Rollouts and Workspaces; each Workspace's
plan, policy verdict, run history, outputs (names only) and events; each
Rollout's stages. Actions: approve a named plan, promote a stage, replan,
retry, unlock, suspend and resume, through the same code as the commands.
Pages follow changes as they happen (server-sent events).

Only loopback addresses are served; --address with another one also needs
--allow-remote, which exposes your credentials to whoever reaches the port
and holds the session: do not.`,
		Example: `  kubectl magos ui                 # opens the browser
  kubectl magos ui -A --no-browser # every namespace; print the URL only`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), f) },
	}
	cmd.Flags().StringVar(&o.address, "address", "127.0.0.1", "the address to listen on: loopback only, unless --allow-remote")
	cmd.Flags().IntVar(&o.port, "port", 0, "the port (0: any free one)")
	cmd.Flags().BoolVar(&o.noBrowser, "no-browser", false, "print the URL without opening a browser")
	cmd.Flags().BoolVarP(&o.allNS, "all-namespaces", "A", false, "show every namespace you may read")
	cmd.Flags().BoolVar(&o.allowRemote, "allow-remote", false, "allow a non-loopback --address (dangerous: see above)")
	return cmd
}

func (o *uiOptions) run(ctx context.Context, f *factory) error {
	ip := net.ParseIP(o.address)
	if o.address == "localhost" {
		ip = net.IPv4(127, 0, 0, 1)
	}
	if ip == nil {
		return failure.Usage("--address %q is not an IP address", o.address)
	}
	if !ip.IsLoopback() && !o.allowRemote {
		return failure.Usage("--address %s is not a loopback address: the UI acts with your credentials; add --allow-remote only if you know who can reach it", o.address)
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	cs, err := f.clientset()
	if err != nil {
		return err
	}
	ns := ""
	if !o.allNS {
		if ns, err = f.namespace(); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), fmt.Sprint(o.port)))
	if err != nil {
		return err
	}
	s, link := ui.New(ui.Config{Client: c, Logs: cs, Namespace: ns, DefaultNamespace: f.namespace}, ln.Addr().String(), time.Now)
	fmt.Fprintf(f.streams.Out, "Magos UI on %s (Ctrl-C stops it)\n%s\n", s.Origin(), link)
	if !o.noBrowser {
		ui.OpenBrowser(link)
	}
	return s.Serve(ctx, ln)
}

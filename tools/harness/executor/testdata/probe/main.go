// Command probe is the process the executor's tests run as a Pod's
// container. It reports what it saw as JSON in its termination message:
// its environment, its identity, and whether its ServiceAccount may read
// two ConfigMaps. Its first argument says how it ends: succeed, fail, or
// sleep (until SIGTERM). With PROBE_ORPHAN_PID set it first starts a copy of
// itself in a session of its own that ignores SIGTERM and never ends (mode
// linger), and writes that copy's PID to the file PROBE_ORPHAN_PID names: a
// process a Pod leaves behind.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Report is the probe's termination message.
type Report struct {
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	User      string            `json:"user"`
	Groups    []string          `json:"groups"`
	Allowed   string            `json:"allowed"`
	Forbidden string            `json:"forbidden"`
	WorkDir   bool              `json:"workDirWritable"`
	// File is the content of the file PROBE_FILE names.
	File string `json:"file"`
}

func main() {
	mode := "succeed"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if mode == "linger" {
		signal.Ignore(syscall.SIGTERM)
		select {}
	}
	if path := os.Getenv("PROBE_ORPHAN_PID"); path != "" {
		if err := startOrphan(path); err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(2)
		}
	}
	// Catch SIGTERM before saying it started: a test that waits for
	// "started" can then stop the probe and see it handle the signal.
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	record("started")

	rep := Report{Args: os.Args[1:], Env: map[string]string{}}
	for _, name := range []string{"PROBE_SECRET", "PROBE_NAMESPACE", "PROBE_POD", "PROBE_SA", "PROBE_EXPANDED", "FROM_CM_value", "PROBE_OPTIONAL", "HOME", "MAGOS_VERSIONS_DIR"} {
		if v, ok := os.LookupEnv(name); ok {
			rep.Env[name] = v
		}
	}
	if p := os.Getenv("PROBE_FILE"); p != "" {
		data, err := os.ReadFile(p)
		rep.File = string(data)
		if err != nil {
			rep.File = err.Error()
		}
	}
	rep.WorkDir = os.WriteFile(os.Getenv("MAGOS_WORK_DIR")+"/probe", []byte("x"), 0o600) == nil
	if err := inspect(&rep); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(2)
	}
	data, _ := json.Marshal(rep)
	if err := os.WriteFile(os.Getenv("MAGOS_TERMINATION_MESSAGE"), data, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(2)
	}
	fmt.Println("probe done:", mode)

	switch mode {
	case "fail":
		fmt.Fprintln(os.Stderr, "probe: failing as asked")
		os.Exit(1)
	case "sleep":
		<-terms
		record("terminated")
		os.Exit(143)
	}
}

// startOrphan starts the probe in mode linger in a new session, the way a
// daemon leaves its parent's process group, and writes its PID to path.
func startOrphan(path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "linger")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
}

// inspect asks the apiserver who the probe is and reads the ConfigMaps.
func inspect(rep *Report) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	rep.User, rep.Groups = review.Status.UserInfo.Username, review.Status.UserInfo.Groups
	ns := os.Getenv("PROBE_NAMESPACE")
	if name := os.Getenv("PROBE_ALLOWED"); name != "" {
		rep.Allowed = readConfigMap(ctx, cs, ns, name)
	}
	if name := os.Getenv("PROBE_FORBIDDEN"); name != "" {
		rep.Forbidden = readConfigMap(ctx, cs, ns, name)
	}
	return nil
}

// readConfigMap returns the ConfigMap's "value", or the reason it could
// not be read.
func readConfigMap(ctx context.Context, cs kubernetes.Interface, ns, name string) string {
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return string(apierrors.ReasonForError(err))
	}
	return cm.Data["value"]
}

// record appends a line to the file PROBE_RECORD names, so tests can count
// how often the probe started and whether it saw SIGTERM.
func record(line string) {
	path := os.Getenv("PROBE_RECORD")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

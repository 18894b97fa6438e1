package artifactproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/apis/artifactdigest"
	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// Extra keys the apiserver adds to the user of a token bound to a Pod.
const (
	podNameExtra = "authentication.kubernetes.io/pod-name"
	podUIDExtra  = "authentication.kubernetes.io/pod-uid"
)

// grant is what one run may fetch: the artifact its Workspace's status
// recorded when the controller started it.
type grant struct {
	Namespace, Workspace, Job string
	URL, Digest               string
}

// denial is a refused request: the HTTP status, a reason for the metric
// and the log, and what went wrong. The response body says only the status.
type denial struct {
	status int
	reason string
	err    error
}

func (d *denial) Error() string { return d.reason + ": " + d.err.Error() }

func unauthenticated(format string, a ...any) error {
	return &denial{status: http.StatusUnauthorized, reason: ResultUnauthenticated, err: fmt.Errorf(format, a...)}
}

func forbidden(format string, a ...any) error {
	return &denial{status: http.StatusForbidden, reason: ResultForbidden, err: fmt.Errorf(format, a...)}
}

// notYet is a request to try again: the runner retries a 503.
func notYet(format string, a ...any) error {
	return &denial{status: http.StatusServiceUnavailable, reason: ResultFailed, err: fmt.Errorf(format, a...)}
}

// authorize maps a bearer token to the artifact its run may fetch. Every
// read goes to the apiserver (Reader is uncached): a request per run is
// cheap, and a proxy replica or shard needs no cache of other shards' Jobs.
//
// The token leads to its Pod, the Pod to the Job that controls it, the Job
// to the Workspace that controls it; what is served follows from what the
// controller recorded in that Workspace's status when it started the run
// (the Job's name and UID, the artifact), never from the Job, which anyone
// who may create Jobs in the namespace can make alike. The Workspace's
// source must still pass the reconciler's guards, and the artifact must be
// an artifact file of that source on an allowed host.
func (s *Server) authorize(ctx context.Context, token string) (grant, error) {
	if token == "" {
		return grant{}, unauthenticated("no bearer token")
	}
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{
		Token: token, Audiences: []string{magosv1.ArtifactTokenAudience},
	}}
	if err := s.Client.Create(ctx, review); err != nil {
		return grant{}, fmt.Errorf("reviewing the token: %w", err)
	}
	st := review.Status
	if !st.Authenticated || !slices.Contains(st.Audiences, magosv1.ArtifactTokenAudience) {
		return grant{}, unauthenticated("the token is not valid for audience %s", magosv1.ArtifactTokenAudience)
	}
	ns, sa, ok := serviceAccountOf(st.User.Username)
	if !ok {
		return grant{}, forbidden("%s is not a ServiceAccount", st.User.Username)
	}
	podName, podUID := only(st.User.Extra[podNameExtra]), only(st.User.Extra[podUIDExtra])
	if podName == "" || podUID == "" {
		return grant{}, forbidden("the token of %s/%s is not bound to a Pod", ns, sa)
	}

	reader := s.Reader
	pod := &corev1.Pod{}
	if err := get(ctx, reader, ns, podName, pod); err != nil {
		return grant{}, err
	}
	if string(pod.UID) != podUID || pod.Spec.ServiceAccountName != sa {
		return grant{}, forbidden("Pod %s/%s is not the Pod the token was issued for", ns, podName)
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return grant{}, forbidden("Pod %s/%s has finished", ns, podName)
	}
	jobRef := metav1.GetControllerOf(pod)
	if jobRef == nil || jobRef.Kind != "Job" || jobRef.APIVersion != batchv1.SchemeGroupVersion.String() {
		return grant{}, forbidden("Pod %s/%s is not controlled by a Job", ns, podName)
	}
	job := &batchv1.Job{}
	if err := get(ctx, reader, ns, jobRef.Name, job); err != nil {
		return grant{}, err
	}
	if done, _ := runjob.Finished(job); job.UID != jobRef.UID || done {
		return grant{}, forbidden("Job %s/%s is not a run in progress", ns, jobRef.Name)
	}
	wsRef := metav1.GetControllerOf(job)
	if wsRef == nil || wsRef.Kind != magosv1.WorkspaceKind || wsRef.APIVersion != magosv1.GroupVersion.String() ||
		job.Labels[magosv1.ManagedByLabel] != magosv1.ManagedByValue || job.Labels[magosv1.WorkspaceLabel] != wsRef.Name {
		return grant{}, forbidden("Job %s/%s is not a Workspace's run", ns, job.Name)
	}
	ws := &magosv1.Workspace{}
	if err := get(ctx, reader, ns, wsRef.Name, ws); err != nil {
		return grant{}, err
	}
	if ws.UID != wsRef.UID {
		return grant{}, forbidden("Workspace %s/%s is not the one Job %s belongs to", ns, wsRef.Name, job.Name)
	}
	cr, err := s.recordedRun(ws, job)
	if err != nil {
		return grant{}, err
	}
	if want := runjob.ServiceAccount(ws, cr.Phase); sa != want || job.Spec.Template.Spec.ServiceAccountName != want {
		return grant{}, forbidden("Pod %s/%s runs as %s; %s run %s of Workspace %s runs as %s", ns, podName, sa, cr.Phase, job.Name, ws.Name, want)
	}
	if err := s.sourceAllowed(ctx, ws); err != nil {
		return grant{}, err
	}
	g := grant{Namespace: ns, Workspace: ws.Name, Job: job.Name, URL: cr.ArtifactURL, Digest: cr.ArtifactDigest}
	if a := magosv1.ParseRunAnnotations(job.Annotations); a.ArtifactURL != g.URL || a.ArtifactDigest != g.Digest {
		return grant{}, forbidden("Job %s/%s names another artifact than the one its run was started on", ns, job.Name)
	}
	if g.URL == "" || !artifactdigest.Valid(g.Digest) {
		return grant{}, forbidden("run %s of Workspace %s/%s names no artifact with a digest", job.Name, ns, ws.Name)
	}
	if err := s.Hosts.Check(g.URL); err != nil {
		return grant{}, forbidden("run %s of Workspace %s/%s: %v", job.Name, ns, ws.Name, err)
	}
	if err := ofSource(ctx, reader, ws, g.URL); err != nil {
		return grant{}, err
	}
	return g, nil
}

// recordedRun is the run in progress that ws's status records for job: the
// Job the controller created, by name and UID. A Job the status does not
// name may be one the controller created a moment ago and is recording:
// for recordWait after its creation it is answered 503 (the runner tries
// again), then 403. A Job of another UID, or one recorded without a UID
// (adopted: nothing tells it from a Job someone else created), is refused.
func (s *Server) recordedRun(ws *magosv1.Workspace, job *batchv1.Job) (*magosv1.RunStatus, error) {
	cr := ws.Status.CurrentRun
	switch {
	case cr == nil || cr.Job != job.Name:
		if s.now().Sub(job.CreationTimestamp.Time) < recordWait {
			return nil, notYet("Job %s/%s is not (yet) the run in progress of Workspace %s", job.Namespace, job.Name, ws.Name)
		}
		return nil, forbidden("Job %s/%s is not the run in progress of Workspace %s", job.Namespace, job.Name, ws.Name)
	case cr.Result != magosv1.ResultRunning:
		return nil, forbidden("run %s of Workspace %s/%s has ended", cr.Job, ws.Namespace, ws.Name)
	case cr.JobUID == "":
		return nil, forbidden("run %s of Workspace %s/%s was adopted from a Job the controller found, not started by it", cr.Job, ws.Namespace, ws.Name)
	case cr.JobUID != job.UID:
		return nil, forbidden("Job %s/%s is not the Job the controller created for run %s of Workspace %s (another UID)", job.Namespace, job.Name, cr.Job, ws.Name)
	}
	return cr, nil
}

// sourceAllowed applies the reconciler's guards on ws's source
// (config.Guards.CheckSourceNamespace, config.CheckProjectSource): a run
// recorded before a guard applied, or a Job made for a Workspace the
// reconciler refuses, gets nothing. A Project that does not exist allows
// nothing.
func (s *Server) sourceAllowed(ctx context.Context, ws *magosv1.Workspace) error {
	if err := s.Guards.CheckSourceNamespace(ws); err != nil {
		return forbidden("Workspace %s/%s: %v", ws.Namespace, ws.Name, err)
	}
	if ws.Spec.ProjectRef == nil {
		return nil
	}
	p := &magosv1.Project{}
	if err := get(ctx, s.Reader, ws.Namespace, ws.Spec.ProjectRef.Name, p); err != nil {
		return err
	}
	if err := config.CheckProjectSource(ws, p); err != nil {
		return forbidden("Workspace %s/%s: %v", ws.Namespace, ws.Name, err)
	}
	return nil
}

// artifactFile is the name of an artifact file source-controller writes
// (<digest>.tar.gz, <revision>.tar.gz before Flux 2.0, and an
// OCIRepository's <algorithm>:<hex>.tar.gz).
var artifactFile = regexp.MustCompile(`^([a-z0-9]+:)?[A-Za-z0-9][A-Za-z0-9._-]*\.tar\.gz$`)

// ofSource checks that rawURL is an artifact file of ws's own source: on
// the host that serves the source's current artifact, directly in the
// source's storage directory (<kind>/<namespace>/<name>/<file>.tar.gz,
// source-controller's layout), with no query. Nothing else is fetched: not
// a directory, which source-controller's file server lists.
func ofSource(ctx context.Context, reader client.Reader, ws *magosv1.Workspace, rawURL string) error {
	current, err := fluxsource.Fetch(ctx, reader, ws)
	if err != nil {
		return forbidden("the source of Workspace %s/%s: %v", ws.Namespace, ws.Name, err)
	}
	want, err1 := url.Parse(current.URL)
	got, err2 := url.Parse(rawURL)
	if err := errors.Join(err1, err2); err != nil {
		return forbidden("artifact URL: %v", err)
	}
	ref := ws.Spec.SourceRef
	prefix := "/" + strings.ToLower(ref.Kind) + "/" + fluxsource.Namespace(ws) + "/" + ref.Name + "/"
	clean := got.EscapedPath()
	file, inDir := strings.CutPrefix(clean, prefix)
	if got.Scheme != want.Scheme || got.Host != want.Host || got.User != nil || !inDir || strings.Contains(clean, "%") {
		return forbidden("artifact %s is not one of %s %s/%s", got.Redacted(), ref.Kind, fluxsource.Namespace(ws), ref.Name)
	}
	if !artifactFile.MatchString(file) || got.RawQuery != "" || got.ForceQuery || got.Fragment != "" {
		return forbidden("%s is not an artifact file of %s %s/%s", got.Redacted(), ref.Kind, fluxsource.Namespace(ws), ref.Name)
	}
	return nil
}

// serviceAccountOf splits "system:serviceaccount:<namespace>:<name>".
func serviceAccountOf(username string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(username, "system:serviceaccount:")
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	return namespace, name, ok && namespace != "" && name != ""
}

// only is the single value of an extra, empty when there is not exactly one.
func only(v authenticationv1.ExtraValue) string {
	if len(v) != 1 {
		return ""
	}
	return v[0]
}

// get reads one object; a missing one is a denial.
func get(ctx context.Context, reader client.Reader, ns, name string, o client.Object) error {
	err := reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, o)
	if apierrors.IsNotFound(err) {
		return forbidden("%T %s/%s not found", o, ns, name)
	}
	return err
}

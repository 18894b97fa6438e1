package artifactproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
)

// Extra keys the apiserver adds to the user of a token bound to a Pod.
const (
	podNameExtra = "authentication.kubernetes.io/pod-name"
	podUIDExtra  = "authentication.kubernetes.io/pod-uid"
)

// grant is what one run may fetch: its Job's artifact.
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

// authorize maps a bearer token to the artifact its run may fetch. Every
// read goes to the apiserver (reader is uncached): a request per run is
// cheap, and a proxy replica or shard needs no cache of other shards' Jobs.
func authorize(ctx context.Context, c client.Client, reader client.Reader, token string) (grant, error) {
	if token == "" {
		return grant{}, unauthenticated("no bearer token")
	}
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{
		Token: token, Audiences: []string{magosv1.ArtifactTokenAudience},
	}}
	if err := c.Create(ctx, review); err != nil {
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
	if job.UID != jobRef.UID || finished(job) {
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
	a := magosv1.ParseRunAnnotations(job.Annotations)
	g := grant{Namespace: ns, Workspace: ws.Name, Job: job.Name, URL: a.ArtifactURL, Digest: a.ArtifactDigest}
	if g.URL == "" || !artifactdigest.Valid(g.Digest) {
		return grant{}, forbidden("Job %s/%s names no artifact with a digest", ns, job.Name)
	}
	if err := ofSource(ctx, reader, ws, g.URL); err != nil {
		return grant{}, err
	}
	return g, nil
}

// ofSource checks that rawURL is an artifact of ws's own source: on the
// host that serves the source's current artifact, under the source's
// storage path (<kind>/<namespace>/<name>/, source-controller's layout). A
// Job whoever could create it names nothing else.
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
	if got.Scheme != want.Scheme || got.Host != want.Host || got.User != nil ||
		!strings.HasPrefix(clean, prefix) || strings.Contains(clean, "/../") || strings.Contains(clean, "%") {
		return forbidden("artifact %s is not one of %s %s/%s", got.Redacted(), ref.Kind, fluxsource.Namespace(ws), ref.Name)
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

// finished reports whether a Job has completed or failed.
func finished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

package clustercheck

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/view"
)

// The run check (check --images) pulls the images a run uses, the runner
// image and the default engine's image, in a tenant namespace as a run
// Pod does: with the runner pull Secrets the workspace-controller gives
// every run Pod, and the runner's labels, so NetworkPolicies treat it as a
// runner. It reads them from the controller's Deployment, so it checks
// what is installed, not what the chart's defaults say. The runner then
// asks the server a run fetches its artifact from (the artifact proxy, or
// without it source-controller) whether it is reachable.

// runImages are the images and pull Secrets a run Pod uses, as the
// workspace-controller's flags set them, and where it fetches artifacts.
type runImages struct {
	Runner      string
	Engine      string // the default engine's image at the default version
	EngineName  string // e.g. "opentofu 1.10.6"
	PullSecrets []string
	// ReachURL is what a run fetches its artifact from; ReachWhat names
	// it. ProxyURL is the artifact proxy's, when it is on.
	ReachURL, ReachWhat, ProxyURL string
}

// runImagesOf reads runImages from the workspace-controller's Deployment.
func runImagesOf(d *appsv1.Deployment) (runImages, error) {
	var im runImages
	engine, engines, version := string(magosv1.EngineOpenTofu), map[string]string{}, ""
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, a := range append(slices.Clone(c.Command), c.Args...) {
			name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !ok {
				continue
			}
			switch name {
			case "runner-image":
				im.Runner = value
			case "runner-image-pull-secrets":
				for _, name := range strings.Split(value, ",") {
					if name = strings.TrimSpace(name); name != "" && !slices.Contains(im.PullSecrets, name) {
						im.PullSecrets = append(im.PullSecrets, name)
					}
				}
			case "default-engine-version":
				version = value
			case "artifact-proxy-url":
				im.ProxyURL = value
			case "engine-image":
				if e, image, ok := strings.Cut(value, "="); ok {
					engines[e] = image
				}
			}
		}
	}
	if im.Runner == "" {
		return im, fmt.Errorf("the workspace-controller's Deployment %s sets no --runner-image", d.Name)
	}
	if image := engines[engine]; image != "" && version != "" {
		im.Engine = strings.ReplaceAll(image, magosv1.EngineImageVersionPlaceholder, version)
		im.EngineName = engine + " " + version
	}
	return im, nil
}

// imageCheckPod is a Pod that pulls the images as a run Pod does and runs
// each briefly: the engine image's entrypoint copies the engine, the runner
// prints its version. Hardened as a run Pod, so a namespace enforcing the
// restricted Pod Security level admits it.
func imageCheckPod(namespace string, im runImages) *corev1.Pod {
	hardened := magosv1.RunContainerSecurityContext()
	small := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
	}
	args := []string{"version"}
	if im.ReachURL != "" {
		args = []string{magosv1.RunnerReach, im.ReachURL}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "magos-check-images-", Namespace: namespace,
			Labels: map[string]string{"app.kubernetes.io/name": "magos-check",
				// A runner's labels, for the NetworkPolicies that select runners.
				magosv1.WorkspaceLabel: "magos-check", magosv1.ManagedByLabel: magosv1.ManagedByValue}},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			ActiveDeadlineSeconds:        ptr.To(int64(600)),
			Containers: []corev1.Container{{Name: "runner", Image: im.Runner, Args: args,
				Resources: small, SecurityContext: hardened, TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}},
		},
	}
	for _, s := range im.PullSecrets {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	if im.Engine != "" {
		pod.Spec.Volumes = []corev1.Volume{{Name: magosv1.EngineVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		pod.Spec.InitContainers = []corev1.Container{{Name: magosv1.EngineInitContainer, Image: im.Engine, Args: []string{magosv1.EngineInstallDir},
			VolumeMounts: []corev1.VolumeMount{{Name: magosv1.EngineVolume, MountPath: magosv1.EngineInstallDir}},
			Resources:    small, SecurityContext: hardened}}
	}
	return pod
}

// pullFailures are the kubelet's waiting reasons of an image it could not
// pull.
var pullFailures = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "ImageInspectError"}

// startFailures are the kubelet's waiting reasons of a container it
// cannot start, which it retries for ever.
var startFailures = []string{"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}

// imageResults judges the check Pod: each image is ok once its container
// ran to success, failed when the kubelet could not pull it or it exited
// non-zero; done says the check has its answer: every image judged, or
// one failed (the kubelet retries a pull for ever, and the runner does not
// start before the engine's init container ran).
func imageResults(pod *corev1.Pod, im runImages) (results []view.CheckResult, done bool) {
	done = true
	judge := func(name, image string, st *corev1.ContainerStatus) {
		r := view.CheckResult{Name: name, Status: view.CheckFail, Detail: image}
		switch {
		case st != nil && st.State.Terminated != nil && (st.State.Terminated.ExitCode == 0 ||
			(name == "runner image" && im.ReachURL != "" && st.State.Terminated.ExitCode == magosv1.ExitUnreachable)):
			r.Status, r.Detail = view.CheckOK, image+" pulled in "+pod.Namespace
		case st != nil && st.State.Waiting != nil && slices.Contains(pullFailures, st.State.Waiting.Reason):
			r.Detail = fmt.Sprintf("%s: %s: %s", image, st.State.Waiting.Reason, st.State.Waiting.Message)
			r.Advice = pullAdvice(pod.Namespace, im)
		case st != nil && st.State.Waiting != nil && slices.Contains(startFailures, st.State.Waiting.Reason):
			r.Detail = fmt.Sprintf("%s pulled, but its container cannot start: %s: %s", image, st.State.Waiting.Reason, st.State.Waiting.Message)
			r.Advice = "kubectl -n " + pod.Namespace + " describe pod " + pod.Name + " (a runner Pod would fail the same way)"
		case st != nil && st.State.Terminated != nil:
			r.Detail = fmt.Sprintf("%s pulled, but exited %d (%s)", image, st.State.Terminated.ExitCode, st.State.Terminated.Reason)
			r.Advice = "the image is not Magos's " + name + " of this release: check global.image.repository and the image's tag"
		case pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
			r.Detail = image + " not run: " + view.OrNone(pod.Status.Reason+" "+pod.Status.Message)
			r.Advice = "kubectl -n " + pod.Namespace + " describe pod " + pod.Name
		default:
			r.Status, r.Detail, done = view.CheckWarn, image+" not pulled yet", false
			r.Advice = "the node has not pulled it in time: kubectl -n " + pod.Namespace + " get events; retry with a longer --timeout"
		}
		results = append(results, r)
	}
	if im.Engine != "" {
		judge("engine image ("+im.EngineName+")", im.Engine, containerStatus(pod.Status.InitContainerStatuses, magosv1.EngineInitContainer))
	}
	runner := containerStatus(pod.Status.ContainerStatuses, "runner")
	judge("runner image", im.Runner, runner)
	if im.ReachURL != "" {
		results = append(results, reachResult(pod.Namespace, im, runner))
	}
	failed := slices.ContainsFunc(results, func(r view.CheckResult) bool { return r.Status == view.CheckFail })
	return results, done || failed
}

// reachResult judges whether the runner reached where runs fetch their
// artifacts.
func reachResult(namespace string, im runImages, runner *corev1.ContainerStatus) view.CheckResult {
	r := view.CheckResult{Name: "artifact path", Status: view.CheckWarn, Detail: "not asked: the runner did not run"}
	if runner == nil || runner.State.Terminated == nil {
		return r
	}
	t := runner.State.Terminated
	switch t.ExitCode {
	case magosv1.ExitSucceeded:
		r.Status, r.Detail = view.CheckOK, "a runner in "+namespace+" reaches the "+im.ReachWhat
	case magosv1.ExitUnreachable:
		r.Status, r.Detail = view.CheckFail, "a runner in "+namespace+" cannot reach the "+im.ReachWhat+": "+strings.TrimSpace(t.Message)
		r.Advice = "a NetworkPolicy blocks it: allow egress from runner Pods (label " + magosv1.ManagedByLabel + "=" + magosv1.ManagedByValue + ") to it"
		if im.ProxyURL == "" {
			r.Advice += ", and ingress to source-controller from them (chart: fluxSourceAccess.enabled, or the artifact proxy, artifactProxy.enabled)"
		} else {
			r.Advice += " (the chart's workspace-controller NetworkPolicy admits them on the proxy port)"
		}
	}
	return r
}

// pullAdvice says what to do about an image the node could not pull.
func pullAdvice(namespace string, im runImages) string {
	secrets := "none"
	if len(im.PullSecrets) > 0 {
		secrets = strings.Join(im.PullSecrets, ", ")
	}
	return fmt.Sprintf("push the release's images to the registry (make push REGISTRY=…) and set global.image.repository to it; "+
		"for a private registry, create the pull Secret in %s and name it in runner.imagePullSecrets (now: %s)", namespace, secrets)
}

func containerStatus(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

// checkImages runs the image check in namespace: it finds the
// workspace-controller's Deployment in install, starts the check Pod and
// judges it until done or timeout, and deletes it.
func checkImages(ctx context.Context, c client.Client, install, namespace string, timeout time.Duration) ([]view.CheckResult, error) {
	var deps appsv1.DeploymentList
	if err := c.List(ctx, &deps, client.InNamespace(install), client.MatchingLabels{"app.kubernetes.io/name": "workspace-controller"}); err != nil {
		return nil, fmt.Errorf("listing the workspace-controller's Deployments: %w", err)
	}
	if len(deps.Items) == 0 {
		return []view.CheckResult{{Name: "run images", Status: view.CheckFail, Detail: "no workspace-controller Deployment in " + install,
			Advice: "install Magos first; the image check reads the images the workspace-controller runs"}}, nil
	}
	im, err := runImagesOf(&deps.Items[0])
	if err != nil {
		return nil, err
	}
	if im.ProxyURL != "" {
		var services corev1.ServiceList
		if err := c.List(ctx, &services, client.InNamespace(install)); err != nil {
			return nil, fmt.Errorf("listing the Services of %s: %w", install, err)
		}
		im.ProxyURL = expandServiceEnv(im.ProxyURL, services.Items)
	}
	var notAsked []view.CheckResult
	if im.ReachURL, im.ReachWhat = im.ProxyURL, "artifact proxy ("+im.ProxyURL+")"; im.ProxyURL == "" {
		if im.ReachURL, im.ReachWhat, err = sourceArtifactURL(ctx, c, namespace); err != nil {
			return nil, err
		}
		if im.ReachURL == "" {
			notAsked = append(notAsked, view.CheckResult{Name: "artifact path", Status: view.CheckWarn,
				Detail: "no Flux source in " + namespace + " has an artifact to reach (runners fetch from source-controller directly: the artifact proxy is off)",
				Advice: "create the namespace's GitRepository (or OCIRepository, Bucket) and check again"})
		}
	}
	pod := imageCheckPod(namespace, im)
	if err := c.Create(ctx, pod); err != nil {
		return nil, fmt.Errorf("starting the image check Pod in %s: %w", namespace, err)
	}
	defer func() {
		_ = c.Delete(context.WithoutCancel(ctx), pod, client.PropagationPolicy(metav1.DeletePropagationBackground))
	}()
	deadline := time.Now().Add(timeout)
	for {
		results, done := imageResults(pod, im)
		if done || time.Now().After(deadline) {
			return append(results, notAsked...), nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return nil, fmt.Errorf("reading the image check Pod: %w", err)
		}
	}
}

// sourceArtifactURL is the artifact URL of a Flux source in namespace, as
// source-controller advertises it, and which source it is: what a runner
// downloads from when the artifact proxy is off. "" when none has one.
func sourceArtifactURL(ctx context.Context, c client.Client, namespace string) (url, what string, _ error) {
	for _, kind := range []string{"GitRepository", "OCIRepository", "Bucket"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(fluxSourceVersion.WithKind(kind + "List"))
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				continue
			}
			return "", "", fmt.Errorf("listing %ss in %s: %w", kind, namespace, err)
		}
		for i := range list.Items {
			if url, _, _ := unstructured.NestedString(list.Items[i].Object, "status", "artifact", "url"); url != "" {
				return url, "source-controller (the artifact of " + kind + " " + list.Items[i].GetName() + ")", nil
			}
		}
	}
	return "", "", nil
}

// fluxSourceVersion is the API version of Flux's sources.
var fluxSourceVersion = schema.GroupVersion{Group: "source.toolkit.fluxcd.io", Version: "v1"}

// serviceEnvRef is a $(NAME_SERVICE_HOST) or $(NAME_SERVICE_PORT) reference,
// which the kubelet expands in the controller's arguments from the
// Service environment of its namespace.
var serviceEnvRef = regexp.MustCompile(`\$\(([A-Z0-9_]+)_SERVICE_(HOST|PORT)\)`)

// expandServiceEnv expands the Service references in s as the kubelet does
// in the controller's Pod: NAME is a Service's name upper-cased with "-"
// as "_"; HOST its cluster IP, PORT its first port. A reference to no
// Service is left as it is.
func expandServiceEnv(s string, services []corev1.Service) string {
	return serviceEnvRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := serviceEnvRef.FindStringSubmatch(ref)
		for _, svc := range services {
			if strings.ToUpper(strings.ReplaceAll(svc.Name, "-", "_")) != m[1] {
				continue
			}
			if m[2] == "HOST" {
				return svc.Spec.ClusterIP
			}
			if len(svc.Spec.Ports) > 0 {
				return strconv.Itoa(int(svc.Spec.Ports[0].Port))
			}
		}
		return ref
	})
}

package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Reasons of images the executor is told cannot be pulled, as the kubelet
// reports them: the first attempt fails with ErrImagePull, later ones wait
// in ImagePullBackOff.
const (
	ReasonErrImagePull     = "ErrImagePull"
	ReasonImagePullBackOff = "ImagePullBackOff"
	// ReasonPodInitializing: a container waits for the Pod's init containers.
	ReasonPodInitializing = "PodInitializing"
)

// runInitContainers runs the Pod's init containers in order, as the kubelet
// does before the main container. The executor runs no image, so it
// imitates the one init container Magos uses: the engine image's installer
// becomes a hard link (or copy) of every file of
// Options.EnginesDir/<engine>/<version> into a local directory standing in
// for the emptyDir volume; mountVolumes later maps the runner container's
// mount of that volume to it. An image listed in Options.UnpullableImages
// never starts: its container waits in ErrImagePull, then ImagePullBackOff,
// until the Pod is stopped (deleted or past its deadline). A nil outcome
// means every init container completed.
func (k *kubelet) runInitContainers(ctx context.Context, r *run, pod *corev1.Pod, volumesDir string) (*podOutcome, bool) {
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if k.unpullable(c.Image) {
			out, ok := k.waitForPull(ctx, r, pod, c.Name)
			return &out, ok
		}
		startedAt := metav1.Now().Rfc3339Copy()
		err := k.imitateInit(pod, c, volumesDir)
		term := &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: startedAt, FinishedAt: metav1.Now().Rfc3339Copy()}
		if err != nil {
			term.ExitCode, term.Reason, term.Message = 1, "Error", err.Error()
		}
		if werr := k.updatePodStatus(ctx, r.pod, r.uid, func(st *corev1.PodStatus) { setInitTerminated(st, c.Name, term) }); werr != nil && ctx.Err() == nil {
			k.log.Error(werr, "Writing the init container status", "pod", r.pod)
		}
		if err != nil {
			k.events.Eventf(pod, nil, corev1.EventTypeWarning, "Failed", "Start", "Init container %s failed: %s", c.Name, err)
			return &podOutcome{Failed: true}, true
		}
	}
	if len(pod.Spec.InitContainers) > 0 {
		now := metav1.Now().Rfc3339Copy()
		if err := k.updatePodStatus(ctx, r.pod, r.uid, func(st *corev1.PodStatus) { setInitialized(st, now) }); err != nil && ctx.Err() == nil {
			k.log.Error(err, "Writing the initialized Pod status", "pod", r.pod)
		}
	}
	return nil, true
}

// imitateInit does what init container c would do in its image. The only
// image it knows is the engine image (see apis/magos/v1alpha1
// engine_image.go): run with the engines volume's mount path as its one
// argument, its installer puts the engine binary at
// <dir>/<engine>/<version>/<binary>. The executor takes engine and version
// from the runner container's MAGOS_ENGINE and MAGOS_ENGINE_VERSION (the
// controller picks the image for exactly those) and the binary from
// Options.EnginesDir/<engine>/<version>.
func (k *kubelet) imitateInit(pod *corev1.Pod, c *corev1.Container, volumesDir string) error {
	if c.Name != magosv1.EngineInitContainer || len(c.Command) != 0 || len(c.Args) != 1 {
		return fmt.Errorf("the local executor only imitates the engine image's init container %q (its entrypoint with one directory), not %q %q",
			magosv1.EngineInitContainer, c.Name, append(c.Command, c.Args...))
	}
	if k.opts.EnginesDir == "" {
		return errors.New("the local executor has no Options.EnginesDir to take engines from")
	}
	engine, version := containerEnv(pod, magosv1.EnvEngine), containerEnv(pod, magosv1.EnvEngineVersion)
	rel := filepath.Join(engine, version)
	if engine == "" || version == "" || !filepath.IsLocal(rel) || strings.Count(rel, string(filepath.Separator)) != 1 {
		return fmt.Errorf("the runner container names no valid engine and version (%q, %q)", engine, version)
	}
	dest := filepath.Clean(c.Args[0])
	for _, vm := range c.VolumeMounts {
		if filepath.Clean(vm.MountPath) != dest {
			continue
		}
		if !slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name && v.EmptyDir != nil }) {
			return fmt.Errorf("volume %q is not an emptyDir", vm.Name)
		}
		return linkTree(filepath.Join(k.opts.EnginesDir, rel), filepath.Join(volumesDir, vm.Name, rel))
	}
	return fmt.Errorf("directory %s is not a volume mount of the init container", dest)
}

// containerEnv is the literal value of name in the Pod's first container.
func containerEnv(pod *corev1.Pod, name string) string {
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// linkTree puts every regular file of src into dst (created), hard-linked
// where the filesystem allows it, copied otherwise.
func linkTree(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("engine not found: %w", err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if os.Link(from, to) == nil {
			continue
		}
		if err := copyFile(from, to); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o555)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// unpullable reports whether the executor was told image cannot be pulled.
func (k *kubelet) unpullable(image string) bool {
	return slices.Contains(k.opts.UnpullableImages, image)
}

// waitForPull reports container name as unable to pull its image, like the
// kubelet, until the Pod is stopped; the Pod stays Pending meanwhile.
func (k *kubelet) waitForPull(ctx context.Context, r *run, pod *corev1.Pod, name string) (podOutcome, bool) {
	image := ""
	for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
		if c.Name == name {
			image = c.Image
		}
	}
	msg := fmt.Sprintf("failed to pull and unpack image %q: %s: not found", image, image)
	reason := ReasonErrImagePull
	for {
		if reason == ReasonErrImagePull {
			k.events.Eventf(pod, nil, corev1.EventTypeWarning, "Failed", "Pull", "Failed to pull image %q: %s", image, msg)
		}
		if err := k.updatePodStatus(ctx, r.pod, r.uid, func(st *corev1.PodStatus) { setContainerWaiting(st, name, reason, msg) }); err != nil && ctx.Err() == nil {
			k.log.Error(err, "Writing the Pod status", "pod", r.pod)
		}
		select {
		case <-ctx.Done():
			return podOutcome{}, false
		case <-r.stopped:
			s := r.stopRequested()
			return podOutcome{Failed: true, Reason: s.Reason, Message: s.Message}, true
		case <-time.After(k.opts.ConfigErrorInterval):
		}
		reason, msg = ReasonImagePullBackOff, fmt.Sprintf("Back-off pulling image %q", image)
	}
}

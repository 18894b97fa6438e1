package executor

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// mount maps a container path to the local directory standing in for it.
type mount struct {
	path, local string
}

// mountVolumes writes the content of the container's Secret, ConfigMap and
// projected volume mounts under dir, as the kubelet does before starting a
// container, and returns the mounts to map paths through, longest first.
// An emptyDir is mapped when an init container filled it; other emptyDir
// and other volumes are not materialised: the process's own HOME, TMPDIR
// and MAGOS_WORK_DIR stand in for scratch space. A missing required
// Secret or ConfigMap is a *configError (the kubelet's FailedMount).
func mountVolumes(ctx context.Context, reader client.Reader, mint tokenMinter, pod *corev1.Pod, c *corev1.Container, dir string) ([]mount, error) {
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	var mounts []mount
	for _, vm := range c.VolumeMounts {
		v, ok := volumes[vm.Name]
		if !ok {
			continue
		}
		if v.EmptyDir != nil {
			// An emptyDir an init container filled (see runInitContainers).
			local := filepath.Join(dir, v.Name)
			if st, err := os.Stat(local); err == nil && st.IsDir() {
				mounts = append(mounts, mount{path: filepath.Clean(vm.MountPath), local: local})
			}
			continue
		}
		files, err := volumeFiles(ctx, reader, mint, pod.Namespace, v)
		if err != nil {
			return nil, &configError{err: fmt.Errorf("MountVolume.SetUp failed for volume %q: %w", v.Name, err), mount: true}
		}
		if files == nil {
			continue
		}
		local := filepath.Join(dir, v.Name)
		for _, name := range slices.Sorted(maps.Keys(files)) {
			p := filepath.Join(local, filepath.FromSlash(name))
			if !strings.HasPrefix(p, local+string(filepath.Separator)) {
				return nil, &configError{err: fmt.Errorf("volume %q: path %q escapes the volume", v.Name, name), mount: true}
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return nil, err
			}
			if err := os.WriteFile(p, files[name], 0o600); err != nil {
				return nil, err
			}
		}
		if vm.SubPath != "" {
			local = filepath.Join(local, filepath.FromSlash(vm.SubPath))
		}
		mounts = append(mounts, mount{path: filepath.Clean(vm.MountPath), local: local})
	}
	slices.SortFunc(mounts, func(a, b mount) int { return len(b.path) - len(a.path) })
	return mounts, nil
}

// tokenMinter issues a token of the Pod's ServiceAccount bound to the Pod,
// as the kubelet does for a projected serviceAccountToken source.
type tokenMinter func(ctx context.Context, p *corev1.ServiceAccountTokenProjection) ([]byte, error)

// podTokens mints tokens for pod through the TokenRequest API.
func podTokens(c client.Client, pod *corev1.Pod) tokenMinter {
	return func(ctx context.Context, p *corev1.ServiceAccountTokenProjection) ([]byte, error) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: serviceAccountName(pod)}}
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: p.ExpirationSeconds,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		}}
		if p.Audience != "" {
			tr.Spec.Audiences = []string{p.Audience}
		}
		if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
			return nil, fmt.Errorf("requesting a token of ServiceAccount %s: %w", sa.Name, err)
		}
		return []byte(tr.Status.Token), nil
	}
}

// volumeFiles is the content of a Secret, ConfigMap or projected volume;
// nil for other volume types. A projected ServiceAccount token is minted
// with mint, and left out when mint is nil (a check before mounting).
func volumeFiles(ctx context.Context, reader client.Reader, mint tokenMinter, ns string, v corev1.Volume) (map[string][]byte, error) {
	switch {
	case v.Secret != nil:
		files := map[string][]byte{}
		return files, secretFiles(ctx, reader, ns, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, files)
	case v.ConfigMap != nil:
		files := map[string][]byte{}
		return files, configMapFiles(ctx, reader, ns, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, files)
	case v.Projected != nil:
		files := map[string][]byte{}
		for _, s := range v.Projected.Sources {
			var err error
			switch {
			case s.Secret != nil:
				err = secretFiles(ctx, reader, ns, s.Secret.Name, s.Secret.Items, s.Secret.Optional, files)
			case s.ConfigMap != nil:
				err = configMapFiles(ctx, reader, ns, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, files)
			case s.ServiceAccountToken != nil && mint != nil:
				var token []byte
				if token, err = mint(ctx, s.ServiceAccountToken); err == nil {
					files[s.ServiceAccountToken.Path] = token
				}
			}
			if err != nil {
				return nil, err
			}
		}
		return files, nil
	}
	return nil, nil
}

func secretFiles(ctx context.Context, reader client.Reader, ns, name string, items []corev1.KeyToPath, optional *bool, files map[string][]byte) error {
	s := &corev1.Secret{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) && isOptional(optional) {
			return nil
		}
		return err
	}
	return project(s.Data, items, optional, "secret", files)
}

func configMapFiles(ctx context.Context, reader client.Reader, ns, name string, items []corev1.KeyToPath, optional *bool, files map[string][]byte) error {
	cm := &corev1.ConfigMap{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) && isOptional(optional) {
			return nil
		}
		return err
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	maps.Copy(data, cm.BinaryData)
	return project(data, items, optional, "configmap", files)
}

// project adds data to files: every key, or the listed items at their paths.
func project(data map[string][]byte, items []corev1.KeyToPath, optional *bool, kind string, files map[string][]byte) error {
	if len(items) == 0 {
		maps.Copy(files, data)
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if isOptional(optional) {
				continue
			}
			return fmt.Errorf("%s references non-existent key: %s", kind, it.Key)
		}
		files[it.Path] = v
	}
	return nil
}

// checkVolumes reports whether the container's volumes can be mounted now.
func checkVolumes(ctx context.Context, reader client.Reader, pod *corev1.Pod, c *corev1.Container) error {
	for _, vm := range c.VolumeMounts {
		for _, v := range pod.Spec.Volumes {
			if v.Name != vm.Name {
				continue
			}
			if _, err := volumeFiles(ctx, reader, nil, pod.Namespace, v); err != nil {
				return asMountError(fmt.Errorf("MountVolume.SetUp failed for volume %q: %w", v.Name, err))
			}
		}
	}
	return nil
}

// asMountError marks NotFound and missing keys as mount errors; other
// errors (the apiserver being unreachable) are retried as they are.
func asMountError(err error) error {
	if apierrors.IsNotFound(err) || strings.Contains(err.Error(), "non-existent key") {
		return &configError{err: err, mount: true}
	}
	return err
}

// mapPath maps a container path under one of the mounts to its local
// stand-in: the whole value, or each word of a command line (space
// separated, also after a "key=" prefix, e.g. GIT_SSH_COMMAND's
// "-o UserKnownHostsFile=/etc/ssh/known_hosts"); other text is returned as
// it is.
func mapPath(mounts []mount, value string) string {
	if mapped, ok := mapOne(mounts, value); ok {
		return mapped
	}
	if !strings.Contains(value, " ") {
		return value
	}
	words := strings.Split(value, " ")
	for i, w := range words {
		key, path, hasKey := strings.Cut(w, "=")
		if !hasKey {
			key, path = "", w
		}
		if mapped, ok := mapOne(mounts, path); ok {
			if hasKey {
				mapped = key + "=" + mapped
			}
			words[i] = mapped
		}
	}
	return strings.Join(words, " ")
}

// mapOne maps one container path under one of the mounts.
func mapOne(mounts []mount, path string) (string, bool) {
	for _, m := range mounts {
		if path == m.path {
			return m.local, true
		}
		if rest, ok := strings.CutPrefix(path, m.path+"/"); ok {
			return filepath.Join(m.local, filepath.FromSlash(rest)), true
		}
	}
	return "", false
}

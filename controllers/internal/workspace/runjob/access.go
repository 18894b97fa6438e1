package runjob

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// artifactTokenVolume is the projected volume of the runner's artifact token.
const artifactTokenVolume = "artifact-token"

// artifactTokenExpiry is the token's lifetime; the kubelet renews it at 80%.
const artifactTokenExpiry = 600

// apiAccessVolume is the runner's Kubernetes API credentials, projected as
// the kubelet's own kube-api-access volume would be (token, cluster CA,
// namespace) but mounted into the runner container alone: the engine's
// init container and any sidecar a mutating webhook adds get no token
// (the Pod's automountServiceAccountToken is off).
const apiAccessVolume = "kube-api-access"

// APIAccessDir is where Kubernetes clients look for in-cluster credentials.
const APIAccessDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// apiTokenExpiry is the token's lifetime, the kubelet's default for its
// own volume (it renews the token at 80%).
const apiTokenExpiry = 3607

func apiAccess() (corev1.Volume, corev1.VolumeMount) {
	vol := corev1.Volume{Name: apiAccessVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: new(int64(apiTokenExpiry)), Path: "token"}},
			// Published in every namespace by kube-controller-manager;
			// optional only for a control plane without it.
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
				Optional:             new(true),
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
			}}},
		},
	}}}
	return vol, corev1.VolumeMount{Name: apiAccessVolume, MountPath: APIAccessDir, ReadOnly: true}
}

// artifactAccess is how the runner container of a run reaches its
// artifact: the source's URL, or the proxy's with a token file, on
// a volume mounted into the runner container alone.
func artifactAccess(proxyURL string, a Artifact) (url, tokenFile string, _ *corev1.Volume, _ *corev1.VolumeMount) {
	if proxyURL == "" {
		return a.URL, "", nil, nil
	}
	vol := &corev1.Volume{Name: artifactTokenVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Audience: magosv1.ArtifactTokenAudience, ExpirationSeconds: new(int64(artifactTokenExpiry)), Path: "token",
		}}},
	}}}
	mount := &corev1.VolumeMount{Name: artifactTokenVolume, MountPath: magosv1.ArtifactTokenDir, ReadOnly: true}
	return strings.TrimSuffix(proxyURL, "/") + magosv1.ArtifactProxyPath, magosv1.ArtifactTokenDir + "/token", vol, mount
}

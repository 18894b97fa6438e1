package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"

	"github.com/magos-dev/magos/tools/harness/testenv"
)

// tofuControllerTerraform is tofu-controller's Terraform kind, which
// kubectl magos import reads.
var tofuControllerTerraform = schema.GroupVersionKind{Group: "infra.contrib.fluxcd.io", Version: "v1alpha2", Kind: "Terraform"}

// importConfig is a configuration as tofu-controller's users keep it in
// Git (no backend block: tofu-controller adds the kubernetes backend),
// with variables from a literal, a Secret and a ConfigMap, and an output.
const importConfig = `variable "region" {}
variable "token" {
  sensitive = true
}
variable "size" {}

resource "terraform_data" "net" {
  input = "${var.region}-${var.size}-${sha256(var.token)}"
}

output "id" {
  value = terraform_data.net.id
}
`

// TestCLIImportFromTofuController: state made by OpenTofu's own
// kubernetes backend, as tofu-controller's runner makes it, for a Terraform
// object with variables from a literal, a Secret (varsFrom) and a
// ConfigMap (varsFrom) and outputs. kubectl magos import tofu-controller:
// --dry-run=client and =server (the API server validates the
// Workspace) create nothing; the import creates the Workspace
// (approval Manual), reads the state in place and suspends the Terraform
// object, and its first plan shows no changes (the outputs Secret
// tofu-controller controlled becomes the Workspace's); an object whose state
// differs from what its variables say is imported and its first plan's
// changes are listed, as no proof; an unmappable field is listed; an object whose state is elsewhere is refused and left alone; an
// object whose state lock is held is refused with nothing left behind on
// either side; a second import is a no-op.
func TestCLIImportFromTofuController(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	_, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(env.Root, "tools", "testdata", "crds", "tofu-controller")}, ErrorIfPathMissing: true})
	require.NoError(t, err)

	config := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(config, "main.tf"), []byte(importConfig), 0o644))
	s.gitRepository("infra", config)
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: s.ns},
		StringData: map[string]string{"token": "t0ken"}}))
	require.NoError(t, env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sizes", Namespace: s.ns},
		Data: map[string]string{"size": "large"}}))

	// A Workspace named leftover was deleted and left its state Secret.
	leftover := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tfstate-default-leftover", Namespace: s.ns,
		Labels: map[string]string{"tfstate": "true", "tfstateSecretSuffix": "leftover", "tfstateWorkspace": "default",
			magosv1.ManagedByLabel: magosv1.ManagedByValue, magosv1.WorkspaceLabel: "leftover"},
		Annotations: map[string]string{magosv1.WorkspaceUIDAnnotation: "deleted-workspace-uid"}}}
	require.NoError(t, env.Client.Create(ctx, leftover))

	newTerraform := func(name string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(tofuControllerTerraform)
		u.SetNamespace(s.ns)
		u.SetName(name)
		u.Object["spec"] = spec
		require.NoError(t, env.Client.Create(ctx, u))
		return u
	}
	source := map[string]any{"kind": "GitRepository", "name": "infra"}
	network := newTerraform("network", map[string]any{
		"sourceRef": source, "interval": "5m", "approvePlan": "auto", "path": "./",
		"vars":                 []any{map[string]any{"name": "region", "value": "eu"}},
		"varsFrom":             []any{map[string]any{"kind": "Secret", "name": "creds"}, map[string]any{"kind": "ConfigMap", "name": "sizes"}},
		"writeOutputsToSecret": map[string]any{"name": "network-outputs"},
		"targets":              []any{"terraform_data.net"},
	})
	// tofu-controller wrote network's outputs to a Secret it controls.
	require.NoError(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "network-outputs", Namespace: s.ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: tofuControllerTerraform.GroupVersion().String(), Kind: "Terraform", Name: "network",
			UID: network.GetUID(), Controller: ptr.To(true)}}}, StringData: map[string]string{"id": "x"}}))
	newTerraform("drifted", map[string]any{
		"sourceRef": source, "interval": "5m",
		"vars":     []any{map[string]any{"name": "region", "value": "eu"}, map[string]any{"name": "token", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "creds", "key": "token"}}}},
		"varsFrom": []any{map[string]any{"kind": "ConfigMap", "name": "sizes", "varsKeys": []any{"size"}}},
	})
	newTerraform("staging", map[string]any{"sourceRef": source, "interval": "5m", "workspace": "staging"})
	newTerraform("busy", map[string]any{"sourceRef": source, "interval": "5m", "destroyResourcesOnDeletion": true})
	newTerraform("leftover", map[string]any{"sourceRef": source, "interval": "5m"})
	// The state, written by OpenTofu's kubernetes backend into
	// tfstate-default-network once the object exists, as tofu-controller's
	// runner writes it.
	applyWithKubernetesBackend(t, config, s.ns, "network", "-var=region=eu", "-var=token=t0ken", "-var=size=large")
	// drifted's state was made with another size than its ConfigMap says.
	applyWithKubernetesBackend(t, config, s.ns, "drifted", "-var=region=eu", "-var=token=t0ken", "-var=size=small")
	state := &corev1.Secret{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "tfstate-default-network"}, state))
	stateBefore := state.Data["tfstate"]
	require.NotEmpty(t, stateBefore)
	// busy's state is locked by a tofu-controller run under way.
	require.NoError(t, env.Client.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "lock-tfstate-default-busy", Namespace: s.ns},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("9a1c-tf-runner")}}))

	r := s.magos("import", "tofu-controller", "--dry-run=client", "-o", "yaml")
	require.Equal(t, 1, r.code, "%s", r) // staging, busy and leftover are refused
	assert.Contains(t, r.stdout, "kind: Workspace", "%s", r)
	assert.Contains(t, r.stdout, "name: network", "%s", r)
	assert.Contains(t, r.stdout, "key: token", "the Secret's keys became variables: %s", r)
	r = s.magos("import", "tofu-controller", "network", "--dry-run=server")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, s.ns+"/network: would be imported as Workspace network (dry run: server)", "%s", r)
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "network"}, &magosv1.Workspace{})
	require.True(t, apierrors.IsNotFound(err), "a dry run creates nothing: %v", err)

	r = s.magos("import", "tofu-controller", "--timeout", "4m")
	t.Logf("%s", r)
	require.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stdout, s.ns+"/network: imported as Workspace network, reading state Secret tfstate-default-network in place; the Terraform object is suspended")
	assert.Regexp(t, `first plan \S+: no changes: the import holds; tofu-controller applied every plan`, r.stdout)
	assert.Contains(t, r.stdout, "not mapped: targets: Magos plans the whole configuration")
	assert.Contains(t, r.stdout, s.ns+`/staging: not imported: its state is in engine workspace "staging"`)
	assert.Contains(t, r.stdout, s.ns+"/busy: not imported: the state is locked (Lease lock-tfstate-default-busy held by 9a1c-tf-runner)")
	assert.Contains(t, r.stdout, "the import would change resources; read it (kubectl magos plan show drifted -n "+s.ns+")", "a first plan with changes is no proof")
	assert.Contains(t, r.stdout, "    update terraform_data.net\n", "it lists what would change")
	assert.Contains(t, r.stdout, s.ns+"/leftover: not imported: state Secret tfstate-default-leftover is not this Terraform object's: it is the state of Workspace UID deleted-workspace-uid")
	assert.Contains(t, r.stderr, "4 of 5 not imported, or their first plan has changes")

	ws := s.getWorkspace("network")
	assert.Equal(t, magosv1.ApprovalManual, ws.Spec.Approval)
	assert.False(t, ws.Spec.Suspend)
	require.NotNil(t, ws.Status.Plan)
	assert.False(t, ws.Status.Plan.HasChanges, "the proof: the first plan over the imported state changes nothing")
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(state), state))
	assert.Equal(t, stateBefore, state.Data["tfstate"], "the state was read in place, not rewritten")
	assert.Equal(t, string(ws.UID), state.Annotations[magosv1.WorkspaceUIDAnnotation], "the state Secret is the Workspace's")
	assert.True(t, terraformSuspended(t, s.ns, "network"))
	outputs := &corev1.Secret{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "network-outputs"}, outputs))
	require.Len(t, outputs.OwnerReferences, 1)
	assert.Equal(t, ws.UID, outputs.OwnerReferences[0].UID, "the outputs Secret tofu-controller controlled is the Workspace's")
	assert.False(t, terraformSuspended(t, s.ns, "staging"), "a refused object is left as it was")
	assert.False(t, terraformSuspended(t, s.ns, "busy"), "a refused object is left as it was")
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "busy"}, &magosv1.Workspace{})
	assert.True(t, apierrors.IsNotFound(err), "the import that stopped at the lock left no Workspace: %v", err)
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "leftover"}, &magosv1.Workspace{})
	assert.True(t, apierrors.IsNotFound(err), "a state that is not the object's is not taken over, and no Workspace is left: %v", err)
	assert.False(t, terraformSuspended(t, s.ns, "leftover"), "a refused object is left as it was")

	// The person importing knows the leftover state is the object's.
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(leftover), leftover))
	r = s.magos("import", "tofu-controller", "--adopt-state", string(leftover.UID))
	assert.Equal(t, 2, r.code, "--adopt-state names one object's state: %s", r)
	r = s.magos("import", "tofu-controller", "leftover", "--adopt-state", string(leftover.UID), "--wait=false")
	require.Equal(t, 0, r.code, "%s", r)
	adopted := s.getWorkspace("leftover")
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(leftover), leftover))
	assert.Equal(t, string(adopted.UID), leftover.Annotations[magosv1.WorkspaceUIDAnnotation], "taken over by the UID its importer named")

	generation := ws.Generation
	r = s.magos("import", "tofu-controller", "network", "--timeout", "2m")
	require.Equal(t, 0, r.code, "a second import: %s", r)
	assert.Contains(t, r.stdout, "no changes")
	assert.Equal(t, generation, s.getWorkspace("network").Generation, "a second import changes nothing")
}

// applyWithKubernetesBackend applies dir with OpenTofu's kubernetes backend
// (state Secret tfstate-default-<suffix> in namespace), as
// tofu-controller's runner does.
func applyWithKubernetesBackend(t *testing.T, config, namespace, suffix string, vars ...string) {
	t.Helper()
	dir := t.TempDir()
	main, err := os.ReadFile(filepath.Join(config, "main.tf"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), main, 0o644))
	backend := `terraform {
  backend "kubernetes" {
    secret_suffix = "` + suffix + `"
    namespace     = "` + namespace + `"
    config_path   = "` + env.Kubeconfig + `"
  }
}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "backend.tf"), []byte(backend), 0o644))
	tofu := testenv.TofuPath(env.Root)
	for _, args := range [][]string{{"init", "-input=false", "-no-color"}, append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, vars...)} {
		cmd := exec.Command(tofu, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "HOME="+dir, "TF_DATA_DIR="+filepath.Join(dir, ".terraform"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "tofu %s: %s", args[0], out)
	}
}

func terraformSuspended(t *testing.T, ns, name string) bool {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(tofuControllerTerraform)
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u))
	suspended, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
	return suspended
}

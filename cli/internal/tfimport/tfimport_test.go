package tfimport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func terraform(t *testing.T, spec string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(`apiVersion: infra.contrib.fluxcd.io/v1alpha2
kind: Terraform
metadata: {name: network, namespace: team-a, uid: "1234", labels: {env: dev}}
spec:
`+spec), &u.Object))
	return u
}

func TestMap(t *testing.T) {
	r := Map(terraform(t, `
  sourceRef: {kind: GitRepository, name: infra, namespace: team-a}
  path: ./envs/dev
  interval: 10m
  retryInterval: 30s
  approvePlan: auto
  destroyResourcesOnDeletion: true
  vars:
    - {name: region, value: eu-west-1}
    - {name: zones, value: [a, b]}
    - name: token
      valueFrom: {secretKeyRef: {name: creds, key: token}}
    - name: pod
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
  varsFrom:
    - {kind: Secret, name: shared}
  writeOutputsToSecret: {name: network-outputs, outputs: [vpc_id], labels: {a: b}}
  dependsOn: [{name: base}, {name: other, namespace: team-b}]
  runnerPodTemplate:
    spec:
      nodeSelector: {pool: infra}
      image: ghcr.io/flux-iac/tf-runner:v0.16.0
      resources: {limits: {memory: 1Gi}}
      env:
        - {name: AWS_REGION, value: eu-west-1}
        - name: AWS_SECRET_ACCESS_KEY
          valueFrom: {secretKeyRef: {name: aws, key: secret}}
        - {name: TF_LOG, value: DEBUG}
  serviceAccountName: tf-runner
  alwaysCleanupRunnerPod: true
  storeReadablePlan: none
  targets: [module.vpc]
`))
	require.Empty(t, r.Refused)
	ws := r.Workspace
	assert.Equal(t, "network", ws.Name)
	assert.Equal(t, "team-a", ws.Namespace)
	assert.Equal(t, map[string]string{"env": "dev"}, ws.Labels, "labels carried, for Rollout stages")
	assert.Equal(t, "tofu-controller/1234", ws.Annotations[ImportedFromAnnotation])
	assert.Equal(t, magosv1.ApprovalManual, ws.Spec.Approval, "the first plan is the proof, approved by a person")
	assert.True(t, r.AutoApproved)
	assert.Equal(t, magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}, ws.Spec.SourceRef)
	assert.Equal(t, "envs/dev", ws.Spec.Path)
	assert.Equal(t, 10*time.Minute, ws.Spec.Interval.Duration)
	assert.Equal(t, 30*time.Second, ws.Spec.Retry.Interval.Duration)
	assert.True(t, ws.Spec.DestroyOnDelete)
	require.Len(t, ws.Spec.Vars, 3)
	assert.Equal(t, "eu-west-1", *ws.Spec.Vars[0].Value)
	assert.Equal(t, `["a","b"]`, *ws.Spec.Vars[1].Value)
	assert.True(t, ws.Spec.Vars[1].HCL, "a list is an HCL value")
	assert.Equal(t, "creds", ws.Spec.Vars[2].ValueFrom.SecretKeyRef.Name)
	assert.Equal(t, []VarsFrom{{Kind: "Secret", Name: "shared"}}, r.VarsFrom)
	assert.Equal(t, &magosv1.OutputsSpec{SecretName: "network-outputs", Names: []string{"vpc_id"}}, ws.Spec.Outputs)
	assert.Equal(t, []magosv1.LocalObjectReference{{Name: "base"}}, ws.Spec.DependsOn)
	assert.Equal(t, map[string]string{"pool": "infra"}, ws.Spec.Runner.NodeSelector)
	assert.Equal(t, "1Gi", ws.Spec.Runner.Resources.Limits.Memory().String())
	require.Len(t, ws.Spec.Runner.Env, 2)
	assert.Equal(t, "eu-west-1", *ws.Spec.Runner.Env[0].Value)
	assert.Equal(t, "aws", ws.Spec.Runner.Env[1].ValueFrom.SecretKeyRef.Name)

	var fields []string
	for _, s := range r.Skipped {
		assert.NotEmpty(t, s.Why, s.Field)
		fields = append(fields, s.Field)
	}
	assert.ElementsMatch(t, []string{"vars[3].valueFrom", "writeOutputsToSecret.labels", "dependsOn[1]", "runnerPodTemplate.spec.image", "runnerPodTemplate.spec.env[2]", "targets"}, fields,
		"every set field that was not mapped is reported, fields at tofu-controller's defaults are not")
}

func TestMapRefusesStateElsewhere(t *testing.T) {
	for spec, want := range map[string]string{
		"  workspace: staging\n":                                     `engine workspace "staging"`,
		"  backendConfig: {secretSuffix: legacy}\n":                  "tfstate-default-legacy",
		"  backendConfig: {customConfiguration: 'x'}\n":              "custom backend",
		"  backendConfig: {disable: true}\n":                         "disabled",
		"  cloud: {organization: o, workspaces: {name: w}}":          "Terraform Cloud",
		"  backendConfig: {inClusterConfig: true}\n":                 "tfstate-default-; Magos reads",
		"  backendConfig: {secretSuffix: network, configPath: /k}\n": "another cluster",
	} {
		r := Map(terraform(t, "  sourceRef: {kind: GitRepository, name: infra}\n"+spec))
		assert.Nil(t, r.Workspace, spec)
		assert.Contains(t, r.Refused, want, spec)
	}
	r := Map(terraform(t, "  sourceRef: {kind: GitRepository, name: infra}\n  backendConfig: {secretSuffix: network}\n  workspace: default\n"))
	assert.Empty(t, r.Refused, "the default suffix, spelt out, is the same Secret")
}

func TestExpandVarsFrom(t *testing.T) {
	ws := &magosv1.Workspace{Spec: magosv1.WorkspaceSpec{Vars: []magosv1.Variable{{Name: "region", Value: new("x")}}}}
	keys := map[string][]string{"Secret/a": {"region", "token", "not a name"}, "ConfigMap/b": {"token"}}
	skipped, err := ExpandVarsFrom(ws, []VarsFrom{{Kind: "Secret", Name: "a"}, {Kind: "ConfigMap", Name: "b"}, {Kind: "ConfigMap", Name: "c", Keys: []string{"zone:az"}}},
		func(r VarsFrom) ([]string, error) { return keys[r.Kind+"/"+r.Name], nil })
	require.NoError(t, err)
	require.Len(t, ws.Spec.Vars, 3)
	assert.Equal(t, "a", ws.Spec.Vars[0].ValueFrom.SecretKeyRef.Name, "the Secret's key replaces the literal, as in tofu-controller")
	assert.Equal(t, "b", ws.Spec.Vars[1].ValueFrom.ConfigMapKeyRef.Name, "a later reference wins")
	assert.Equal(t, "az", ws.Spec.Vars[2].Name, "varsKeys key:variable renames")
	assert.Equal(t, "zone", ws.Spec.Vars[2].ValueFrom.ConfigMapKeyRef.Key)
	require.Len(t, skipped, 1)
	assert.Contains(t, skipped[0].Field, `"not a name"`)
}

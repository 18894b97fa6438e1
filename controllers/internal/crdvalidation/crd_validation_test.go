package crdvalidation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func workspace(mutate func(*magosv1.Workspace)) client.Object {
	ws := &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ws-"},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"},
		},
	}
	if mutate != nil {
		mutate(ws)
	}
	return ws
}

func variableSet(mutate func(*magosv1.VariableSet)) client.Object {
	vs := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{GenerateName: "vs-"}}
	if mutate != nil {
		mutate(vs)
	}
	return vs
}

func project(mutate func(*magosv1.Project)) client.Object {
	p := &magosv1.Project{ObjectMeta: metav1.ObjectMeta{GenerateName: "proj-"}}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func rollout(mutate func(*magosv1.Rollout)) client.Object {
	r := &magosv1.Rollout{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ro-"},
		Spec: magosv1.RolloutSpec{
			ProjectRef: magosv1.LocalObjectReference{Name: "platform"},
			Stages: []magosv1.Stage{
				{Name: "dev", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}},
				{Name: "staging", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "staging"}}},
				{Name: "prod", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, Promotion: magosv1.PromotionManual},
			},
		},
	}
	if mutate != nil {
		mutate(r)
	}
	return r
}

func secretRef(name, key string) *magosv1.VariableSource {
	return &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key,
	}}
}

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func TestCRDValidation(t *testing.T) {
	env.Require(t)
	tests := []struct {
		name string
		obj  client.Object
		// wantFields are substrings the refusal must contain (field path and
		// reason); empty means the object must be accepted.
		wantFields []string
	}{
		// Accepted.
		{name: "minimal workspace", obj: workspace(nil)},
		{name: "full workspace", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Path = "envs/dev"
			ws.Spec.Terraform = &magosv1.TerraformSpec{Engine: magosv1.EngineOpenTofu, Version: "1.10.6"}
			ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "platform"}
			ws.Spec.VariableSetRefs = []magosv1.LocalObjectReference{{Name: "shared"}}
			ws.Spec.Vars = []magosv1.Variable{
				{Name: "region", Value: ptr.To("eu-west-1")},
				{Name: "zones", Value: ptr.To(`["a","b"]`), HCL: true},
				{Name: "db_password", ValueFrom: secretRef("db", "password"), Sensitive: true},
			}
			ws.Spec.Approval = magosv1.ApprovalManual
			ws.Spec.Interval = duration(10 * time.Minute)
			ws.Spec.DestroyOnDelete = true
			ws.Spec.Destroy = &magosv1.DestroySpec{Gate: magosv1.DestroyGateSkip}
			ws.Spec.Runner = &magosv1.RunnerSpec{Timeout: duration(30 * time.Minute), ServiceAccountAnnotations: map[string]string{"iam.gke.io/gcp-service-account": "x@y"}}
			ws.Spec.Outputs = &magosv1.OutputsSpec{SecretName: "dev-outputs"}
			ws.Spec.Policy = &magosv1.PolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"magos.dev/policy": "baseline"}}}
		})},
		{name: "terraform engine with v-prefixed prerelease version", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Terraform = &magosv1.TerraformSpec{Engine: magosv1.EngineTerraform, Version: "v1.9.0-beta1"}
		})},
		{name: "OCIRepository source in another namespace", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.SourceRef = magosv1.SourceReference{Kind: "OCIRepository", Name: "modules", Namespace: "flux-system"}
		})},
		{name: "Bucket source", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.SourceRef = magosv1.SourceReference{Kind: "Bucket", Name: "configs"}
		})},
		{name: "variable set with variables, whole sources and env", obj: variableSet(func(vs *magosv1.VariableSet) {
			vs.Spec.Variables = []magosv1.Variable{{Name: "token", ValueFrom: secretRef("api", "token")}, {Name: "tags", Value: ptr.To(`{team="infra"}`), HCL: true}}
			vs.Spec.From = []magosv1.WholeObjectSource{{ConfigMapRef: &magosv1.OptionalObjectReference{Name: "common", Optional: true}}}
			vs.Spec.Env = []magosv1.EnvEntry{{Name: "AWS_REGION", Value: ptr.To("eu-west-1")}, {Name: "AWS_SECRET_ACCESS_KEY", ValueFrom: secretRef("aws", "secret")}}
		})},
		{name: "project with defaults and allow-list", obj: project(func(p *magosv1.Project) {
			p.Spec.Defaults = &magosv1.ProjectDefaults{Terraform: &magosv1.TerraformSpec{Version: "1.10.6"}, Interval: duration(time.Hour), Approval: magosv1.ApprovalAuto,
				Destroy: &magosv1.DestroySpec{Gate: magosv1.DestroyGateEnforce}}
			p.Spec.SourceAllowList = []magosv1.SourceRule{{Kind: "GitRepository", Namespace: "flux-system", Name: "infra-*"}}
		})},
		{name: "project allowing annotation keys and values", obj: project(func(p *magosv1.Project) {
			p.Spec.AllowedServiceAccountAnnotations = []string{"example.com/team"}
			p.Spec.AllowedServiceAccountAnnotationValues = []magosv1.AnnotationRule{{Key: "eks.amazonaws.com/role-arn", Values: []string{"arn:aws:iam::1:role/team-a-*"}}}
		})},
		{name: "workspace with a plan identity", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Runner = &magosv1.RunnerSpec{Plan: &magosv1.PlanRunnerSpec{ServiceAccountAnnotations: map[string]string{"eks.amazonaws.com/role-arn": "reader"}}}
		})},
		{name: "rollout with three stages", obj: rollout(func(r *magosv1.Rollout) {
			r.Spec.Stages[1].BakeTime = duration(5 * time.Minute)
			r.Spec.Stages[1].MaxParallel = ptr.To[int32](2)
		})},
		{name: "rollout promoting an existing stage", obj: rollout(func(r *magosv1.Rollout) {
			r.Spec.Promotions = []magosv1.Promotion{{Stage: "prod", Revision: "main@sha1:abc"}}
		})},

		// Refused: Workspace.
		{name: "workspace with approvals and approval rules", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Approvals = []magosv1.Approval{{Plan: "p1", Digest: "sha256:x", User: "alice", Groups: []string{"platform-admins"}}, {Plan: "p1", Digest: "sha256:x", User: "bob"}}
			ws.Spec.ApprovalRules = []magosv1.ApprovalRule{{Name: "additions", When: "plan.destroy == 0", AutoApprove: true},
				{Name: "deletions", Approvals: new(int32(2)), Groups: []string{"platform-admins"}},
				{Name: "release", ServiceAccounts: []string{"ci/release-bot"}}}
		})},
		{name: "an approval without the plan's digest", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Approvals = []magosv1.Approval{{Plan: "p1", User: "alice"}}
		}), wantFields: []string{"spec.approvals[0].digest", "at least 1 chars long"}},
		{name: "an autoApprove rule naming ServiceAccounts", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.ApprovalRules = []magosv1.ApprovalRule{{Name: "bots", AutoApprove: true, ServiceAccounts: []string{"ci/release-bot"}}}
		}), wantFields: []string{"spec.approvalRules[0]", "an autoApprove rule takes no approvals, groups or serviceAccounts"}},
		{name: "a ServiceAccount named by its username", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.ApprovalRules = []magosv1.ApprovalRule{{Name: "bots", ServiceAccounts: []string{"system:serviceaccount:ci:release-bot"}}}
		}), wantFields: []string{"spec.approvalRules[0].serviceAccounts[0]"}},
		{name: "an autoApprove rule asking approvals", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.ApprovalRules = []magosv1.ApprovalRule{{Name: "both", AutoApprove: true, Approvals: new(int32(2))}}
		}), wantFields: []string{"spec.approvalRules[0]", "an autoApprove rule takes no approvals, groups or serviceAccounts"}},
		{name: "two approvals by one user for one plan", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Approvals = []magosv1.Approval{{Plan: "p1", User: "alice", Digest: "sha256:y"}, {Plan: "p1", User: "alice", Digest: "sha256:x"}}
		}), wantFields: []string{"spec.approvals[1]", "Duplicate value"}},
		{name: "unknown destroy gate", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Destroy = &magosv1.DestroySpec{Gate: "Never"}
		}), wantFields: []string{"spec.destroy.gate", "Unsupported value"}},
		{name: "variable with both value and valueFrom", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "token", Value: ptr.To("x"), ValueFrom: secretRef("api", "token")}}
		}), wantFields: []string{"spec.vars[0]", "value and valueFrom are mutually exclusive"}},
		{name: "unknown engine", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Terraform = &magosv1.TerraformSpec{Engine: "pulumi"}
		}), wantFields: []string{"spec.terraform.engine", "Unsupported value"}},
		{name: "version that is not a version", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Terraform = &magosv1.TerraformSpec{Version: "latest"}
		}), wantFields: []string{"spec.terraform.version"}},
		{name: "variable name starting with a digit", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "1region", Value: ptr.To("x")}}
		}), wantFields: []string{"spec.vars[0].name"}},
		{name: "variable name with a space", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "my var", Value: ptr.To("x")}}
		}), wantFields: []string{"spec.vars[0].name"}},
		{name: "duplicate variable names", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "a", Value: ptr.To("1")}, {Name: "a", Value: ptr.To("2")}}
		}), wantFields: []string{"spec.vars[1]", "Duplicate value"}},
		{name: "negative interval", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Interval = duration(-5 * time.Minute)
		}), wantFields: []string{"spec.interval"}},
		{name: "source kind Magos cannot read", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.SourceRef.Kind = "HelmRepository"
		}), wantFields: []string{"spec.sourceRef.kind", "Unsupported value"}},
		{name: "empty source name", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.SourceRef.Name = ""
		}), wantFields: []string{"spec.sourceRef.name"}},
		{name: "path escaping the artifact", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Path = "envs/../../etc"
		}), wantFields: []string{"spec.path", "must not contain '..'"}},
		{name: "absolute path", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Path = "/etc"
		}), wantFields: []string{"spec.path", "must be relative"}},
		{name: "trigger paths and content skip", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.TriggerPaths = []string{"shared/*.json", "scripts/**"}
			ws.Spec.ContentSkip = magosv1.ContentSkipDisabled
		})},
		{name: "a trigger path escaping the artifact", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.TriggerPaths = []string{"shared/../../x"}
		}), wantFields: []string{"spec.triggerPaths", "must not contain '..'"}},
		{name: "an absolute trigger path", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.TriggerPaths = []string{"/etc/*"}
		}), wantFields: []string{"spec.triggerPaths", "must be relative"}},
		{name: "an unknown content skip", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.ContentSkip = "Sometimes"
		}), wantFields: []string{"spec.contentSkip", "Unsupported value"}},
		{name: "a Project's trigger path escaping the artifact", obj: project(func(p *magosv1.Project) {
			p.Spec.Defaults = &magosv1.ProjectDefaults{TriggerPaths: []string{".."}, ContentSkip: magosv1.ContentSkipDisabled}
		}), wantFields: []string{"spec.defaults.triggerPaths", "must not contain '..'"}},
		{name: "unknown approval mode", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Approval = "Sometimes"
		}), wantFields: []string{"spec.approval", "Unsupported value"}},
		{name: "valueFrom naming both a Secret and a ConfigMap", obj: workspace(func(ws *magosv1.Workspace) {
			src := secretRef("api", "token")
			src.ConfigMapKeyRef = &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "k"}
			ws.Spec.Vars = []magosv1.Variable{{Name: "token", ValueFrom: src}}
		}), wantFields: []string{"spec.vars[0].valueFrom", "exactly one of secretKeyRef, configMapKeyRef or outputRef"}},
		{name: "runner timeout that is not a duration", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Runner = &magosv1.RunnerSpec{Timeout: duration(-time.Minute)}
		}), wantFields: []string{"spec.runner.timeout"}},
		{name: "runner timeout of zero", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Runner = &magosv1.RunnerSpec{Timeout: duration(0)}
		}), wantFields: []string{"spec.runner.timeout", "must be at least 1s"}},
		{name: "runner timeout under a second", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Runner = &magosv1.RunnerSpec{Timeout: duration(500 * time.Millisecond)}
		}), wantFields: []string{"spec.runner.timeout", "must be at least 1s"}},
		{name: "project default runner timeout of zero", obj: project(func(p *magosv1.Project) {
			p.Spec.Defaults = &magosv1.ProjectDefaults{Runner: &magosv1.RunnerSpec{Timeout: duration(0)}}
		}), wantFields: []string{"spec.defaults.runner.timeout", "must be at least 1s"}},

		{name: "workspace name too long for a label value", obj: workspace(func(ws *magosv1.Workspace) {
			ws.GenerateName = ""
			ws.Name = strings.Repeat("w", 64)
		}), wantFields: []string{"Workspace names are at most 63 characters"}},

		{name: "outputs secret named like a state Secret", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Outputs = &magosv1.OutputsSpec{SecretName: magosv1.StateSecretName("victim")}
		}), wantFields: []string{"spec.outputs.secretName", "must not name a state Secret"}},
		{name: "outputs secret named like a plan Secret", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Outputs = &magosv1.OutputsSpec{SecretName: magosv1.PlanSecretName("victim", 7)}
		}), wantFields: []string{"spec.outputs.secretName", "must not name a plan Secret"}},
		{name: "sensitive literal variable", obj: workspace(func(ws *magosv1.Workspace) {
			ws.Spec.Vars = []magosv1.Variable{{Name: "token", Value: ptr.To("hunter2"), Sensitive: true}}
		}), wantFields: []string{"spec.vars[0]", "a sensitive value must come from a Secret"}},

		// Refused: VariableSet.
		{name: "variable set sensitive literal variable", obj: variableSet(func(vs *magosv1.VariableSet) {
			vs.Spec.Variables = []magosv1.Variable{{Name: "token", Value: ptr.To("hunter2"), Sensitive: true}}
		}), wantFields: []string{"spec.variables[0]", "a sensitive value must come from a Secret"}},
		{name: "env name with a dash", obj: variableSet(func(vs *magosv1.VariableSet) {
			vs.Spec.Env = []magosv1.EnvEntry{{Name: "AWS-REGION", Value: ptr.To("x")}}
		}), wantFields: []string{"spec.env[0].name"}},
		{name: "whole source naming neither Secret nor ConfigMap", obj: variableSet(func(vs *magosv1.VariableSet) {
			vs.Spec.From = []magosv1.WholeObjectSource{{HCL: true}}
		}), wantFields: []string{"spec.from[0]", "exactly one of secretRef or configMapRef"}},
		{name: "variable set variable with invalid identifier", obj: variableSet(func(vs *magosv1.VariableSet) {
			vs.Spec.Variables = []magosv1.Variable{{Name: "db.password", ValueFrom: secretRef("db", "pw")}}
		}), wantFields: []string{"spec.variables[0].name"}},
		{name: "variable set variable with value and valueFrom", obj: variableSet(func(vs *magosv1.VariableSet) {
			vs.Spec.Variables = []magosv1.Variable{{Name: "pw", Value: ptr.To("x"), ValueFrom: secretRef("db", "pw")}}
		}), wantFields: []string{"spec.variables[0]", "value and valueFrom are mutually exclusive"}},

		// Refused: Project.
		{name: "annotation key allowed with any value and with listed values", obj: project(func(p *magosv1.Project) {
			p.Spec.AllowedServiceAccountAnnotations = []string{"eks.amazonaws.com/role-arn"}
			p.Spec.AllowedServiceAccountAnnotationValues = []magosv1.AnnotationRule{{Key: "eks.amazonaws.com/role-arn", Values: []string{"arn:aws:iam::1:role/team-a-*"}}}
		}), wantFields: []string{"spec", "list it in one"}},
		{name: "annotation rule without values", obj: project(func(p *magosv1.Project) {
			p.Spec.AllowedServiceAccountAnnotationValues = []magosv1.AnnotationRule{{Key: "eks.amazonaws.com/role-arn"}}
		}), wantFields: []string{"spec.allowedServiceAccountAnnotationValues[0].values"}},
		{name: "allow-list with a kind Magos cannot read", obj: project(func(p *magosv1.Project) {
			p.Spec.SourceAllowList = []magosv1.SourceRule{{Kind: "HelmChart"}}
		}), wantFields: []string{"spec.sourceAllowList[0].kind", "Unsupported value"}},
		{name: "project default interval negative", obj: project(func(p *magosv1.Project) {
			p.Spec.Defaults = &magosv1.ProjectDefaults{Interval: duration(-time.Hour)}
		}), wantFields: []string{"spec.defaults.interval"}},
		{name: "project default engine unknown", obj: project(func(p *magosv1.Project) {
			p.Spec.Defaults = &magosv1.ProjectDefaults{Terraform: &magosv1.TerraformSpec{Engine: "cdktf"}}
		}), wantFields: []string{"spec.defaults.terraform.engine", "Unsupported value"}},

		// Refused: Rollout.
		{name: "duplicate stage names", obj: rollout(func(r *magosv1.Rollout) {
			r.Spec.Stages[1].Name = "dev"
		}), wantFields: []string{"spec.stages[1]", "Duplicate value"}},
		{name: "empty stage name", obj: rollout(func(r *magosv1.Rollout) {
			r.Spec.Stages[0].Name = ""
		}), wantFields: []string{"spec.stages[0].name"}},
		{name: "maxParallel below one", obj: rollout(func(r *magosv1.Rollout) {
			r.Spec.Stages[0].MaxParallel = ptr.To[int32](0)
		}), wantFields: []string{"spec.stages[0].maxParallel", "greater than or equal to 1"}},
		{name: "no stages", obj: rollout(func(r *magosv1.Rollout) {
			r.Spec.Stages = []magosv1.Stage{}
		}), wantFields: []string{"spec.stages"}},
		{name: "promotion of an unknown stage", obj: rollout(func(r *magosv1.Rollout) {
			r.Spec.Promotions = []magosv1.Promotion{{Stage: "qa", Revision: "main@sha1:abc"}}
		}), wantFields: []string{"spec", "promotions must name existing stages"}},
		{name: "negative bake time", obj: rollout(func(r *magosv1.Rollout) {
			r.Spec.Stages[0].BakeTime = duration(-time.Minute)
		}), wantFields: []string{"spec.stages[0].bakeTime"}},
		{name: "unknown promotion mode", obj: rollout(func(r *magosv1.Rollout) {
			r.Spec.Stages[2].Promotion = "Vote"
		}), wantFields: []string{"spec.stages[2].promotion", "Unsupported value"}},
	}

	// Every reserved environment name, and one under each reserved prefix,
	// is refused in VariableSet env: the CEL rule repeats the Go list.
	reserved := append([]string{}, magosv1.ReservedEnvNames...)
	for _, p := range magosv1.ReservedEnvPrefixes {
		reserved = append(reserved, p+"X")
	}
	for _, name := range reserved {
		tests = append(tests, struct {
			name       string
			obj        client.Object
			wantFields []string
		}{name: "reserved env " + name, obj: variableSet(func(vs *magosv1.VariableSet) {
			vs.Spec.Env = []magosv1.EnvEntry{{Name: name, Value: ptr.To("x")}}
		}), wantFields: []string{"spec.env[0].name", "name is reserved"}})
	}
	tests = append(tests, struct {
		name       string
		obj        client.Object
		wantFields []string
	}{name: "env names near reserved ones", obj: variableSet(func(vs *magosv1.VariableSet) {
		vs.Spec.Env = []magosv1.EnvEntry{{Name: "AWS_REGION", Value: ptr.To("x")}, {Name: "MAGOS", Value: ptr.To("x")}, {Name: "TF_VAR_x", Value: ptr.To("x")}, {Name: "HTTPS_PROXY", Value: ptr.To("x")}}
	})})

	ns := env.NewNamespace(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := tt.obj.DeepCopyObject().(client.Object)
			obj.SetNamespace(ns)
			err := env.Client.Create(context.Background(), obj)
			if len(tt.wantFields) == 0 {
				require.NoError(t, err, "valid object was refused")
				return
			}
			require.Error(t, err, "invalid object was accepted")
			require.True(t, apierrors.IsInvalid(err), "want an Invalid error, got %v", err)
			for _, want := range tt.wantFields {
				assert.Contains(t, err.Error(), want, fmt.Sprintf("refusal should name %q", want))
			}
		})
	}
}

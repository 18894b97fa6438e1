// Package tfimport maps tofu-controller's Terraform objects
// (infra.contrib.fluxcd.io/v1alpha2, read as unstructured: Magos does not
// depend on tofu-controller's modules) to Magos Workspaces: every field
// Magos has a setting for, and for every other field that is set, why it
// was not mapped.
//
// The state is read in place: tofu-controller keeps it with OpenTofu's
// kubernetes backend in Secret tfstate-<workspace>-<secretSuffix>, locked
// by Lease lock-tfstate-<workspace>-<secretSuffix>; with the defaults
// (workspace "default", suffix the object's name) those are the names,
// and the layout, of a Magos Workspace's state Secret and lock Lease
// (magosv1.StateSecretName, LockLeaseName). Reading in place copies
// nothing, so nothing can be lost or diverge, and both sides lock the same
// Lease. A Terraform object whose state is anywhere else (another
// workspace or suffix, a custom or disabled backend, Terraform Cloud) is
// refused: moving state is a decision the import does not make for you.
package tfimport

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// GVK is tofu-controller's Terraform kind.
var GVK = schema.GroupVersionKind{Group: "infra.contrib.fluxcd.io", Version: "v1alpha2", Kind: "Terraform"}

// ImportedFromAnnotation, on an imported Workspace, names the Terraform
// object it was imported from by UID: a second import of it is a no-op.
const ImportedFromAnnotation = "magos.dev/imported-from"

// Skipped is a field of a Terraform object that was set and not mapped.
type Skipped struct {
	Field, Why string
}

// VarsFrom is a Secret or ConfigMap every key of which (or the listed
// keys) tofu-controller passes as a variable: the importer reads its keys
// (never its values) and ExpandVarsFrom makes one variable per key.
type VarsFrom struct {
	Kind, Name string
	Keys       []string // varsKeys; empty: every key
	Optional   bool
}

// Result is the mapping of one Terraform object.
type Result struct {
	// Workspace is the Workspace to create: approval Manual, so its first
	// plan is the proof (no changes) before anything is applied.
	Workspace *magosv1.Workspace
	// VarsFrom are the references whose keys become variables.
	VarsFrom []VarsFrom
	// AutoApproved: tofu-controller applied every plan (approvePlan:
	// auto); switch the Workspace to Auto once its plan shows no changes.
	AutoApproved bool
	Skipped      []Skipped
	// Refused says why the object cannot be imported; then Workspace is nil.
	Refused string
}

// notMapped are the fields Magos has no setting for, and why.
var notMapped = map[string]string{
	"targets":                             "Magos plans the whole configuration; a partial apply is not a state it keeps",
	"parallelism":                         "Magos runs the engine with its default parallelism",
	"refreshBeforeApply":                  "Magos applies the stored plan, which refreshed when it was made",
	"fileMappings":                        "Magos mounts nothing into the configuration; use spec.runner.volumes or a VariableSet",
	"readInputsFromSecrets":               "read the other configuration's outputs Secret with vars[].valueFrom.secretKeyRef",
	"healthChecks":                        "Magos has no post-apply health checks; a Rollout stage's bake time is the closest",
	"webhooks":                            "use a ValidatingPolicy on the plan (the policy gate)",
	"cliConfigSecretRef":                  "the engine's CLI configuration is the operator's (--runner-env TF_CLI_CONFIG_FILE with a mounted file)",
	"storeReadablePlan":                   "Magos always stores the readable plan (kubectl magos plan show)",
	"enableInventory":                     "the state Secret is the inventory",
	"tfstate":                             "unlock with kubectl magos unlock",
	"alwaysCleanupRunnerPod":              "runner Jobs are removed after spec.runner / --job-ttl",
	"runnerTerminationGracePeriodSeconds": "set by the controller from --runner-shutdown-wait",
	"force":                               "kubectl magos replan",
	"breakTheGlass":                       "Magos has no interactive shell into a run",
	"enterprise":                          "no equivalent",
	"disableDriftDetection":               "Magos detects drift by planning at every interval; set spec.interval",
	"serviceAccountName":                  "each Workspace's runs use their own least-privilege ServiceAccounts; give them cloud access with spec.runner.serviceAccountAnnotations (workload identity)",
}

// tofuDefaults are the values tofu-controller's CRD defaults fields to: a
// field at its default was not set by anyone, and is not reported.
var tofuDefaults = map[string]any{
	"serviceAccountName": "tf-runner", "alwaysCleanupRunnerPod": true, "runnerTerminationGracePeriodSeconds": int64(30),
	"storeReadablePlan": "none", "workspace": "default", "upgradeOnInit": true, "retryStrategy": "StaticInterval",
}

// mapped are the spec fields Map handles itself.
var mapped = []string{"sourceRef", "path", "vars", "varsFrom", "values", "approvePlan", "interval", "retryInterval", "suspend",
	"destroy", "planOnly", "destroyResourcesOnDeletion", "writeOutputsToSecret", "dependsOn", "runnerPodTemplate",
	"workspace", "backendConfig", "backendConfigsFrom", "cloud"}

// Map maps Terraform object tf to a Workspace of the same name and
// namespace.
func Map(tf *unstructured.Unstructured) Result {
	spec, _, _ := unstructured.NestedMap(tf.Object, "spec")
	if why := stateElsewhere(tf.GetName(), spec); why != "" {
		return Result{Refused: why}
	}
	r := Result{}
	ws := &magosv1.Workspace{
		TypeMeta: metav1.TypeMeta{APIVersion: magosv1.GroupVersion.String(), Kind: magosv1.WorkspaceKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: tf.GetName(), Namespace: tf.GetNamespace(), Labels: maps.Clone(tf.GetLabels()),
			Annotations: map[string]string{ImportedFromAnnotation: "tofu-controller/" + string(tf.GetUID())},
		},
		Spec: magosv1.WorkspaceSpec{Approval: magosv1.ApprovalManual},
	}
	skip := func(field, why string) { r.Skipped = append(r.Skipped, Skipped{field, why}) }

	src, _, _ := unstructured.NestedStringMap(spec, "sourceRef")
	ws.Spec.SourceRef = magosv1.SourceReference{Kind: src["kind"], Name: src["name"]}
	if ns := src["namespace"]; ns != "" && ns != tf.GetNamespace() {
		ws.Spec.SourceRef.Namespace = ns
	}
	if p, _, _ := unstructured.NestedString(spec, "path"); p != "" && p != "." && p != "./" {
		ws.Spec.Path = strings.TrimPrefix(p, "./")
	}
	r.AutoApproved = str(spec, "approvePlan") == "auto"
	if d, ok := duration(spec, "interval", skip); ok {
		ws.Spec.Interval = d
	}
	if d, ok := duration(spec, "retryInterval", skip); ok {
		ws.Spec.Retry = &magosv1.RetrySpec{Interval: d}
	}
	if b, _, _ := unstructured.NestedBool(spec, "destroyResourcesOnDeletion"); b {
		ws.Spec.DestroyOnDelete = true
	}
	if b, _, _ := unstructured.NestedBool(spec, "planOnly"); b {
		ws.Spec.Mode = magosv1.ModePlanOnly
	}
	if b, _, _ := unstructured.NestedBool(spec, "destroy"); b {
		skip("destroy", "a destroy is not imported: import first, then set spec.mode: Destroy")
	}
	if b, _, _ := unstructured.NestedBool(spec, "suspend"); b {
		skip("suspend", "the Terraform object was suspended; the Workspace is not (it only plans until approved)")
	}
	mapVars(spec, ws, &r, skip)
	mapOutputs(spec, ws, skip)
	mapDependsOn(spec, tf.GetNamespace(), ws, skip)
	mapRunner(spec, ws, skip)

	for _, field := range slices.Sorted(maps.Keys(spec)) {
		if slices.Contains(mapped, field) || isZero(spec[field]) || spec[field] == tofuDefaults[field] {
			continue
		}
		why, ok := notMapped[field]
		if !ok {
			why = "Magos has no setting for it"
		}
		skip(field, why)
	}
	r.Workspace = ws
	return r
}

// stateElsewhere says why the object's state is not where Magos reads a
// Workspace of its name, or "".
func stateElsewhere(name string, spec map[string]any) string {
	if w := str(spec, "workspace"); w != "" && w != "default" {
		return fmt.Sprintf("its state is in engine workspace %q; Magos reads workspace default", w)
	}
	if !isZero(spec["cloud"]) {
		return "its state is in Terraform Cloud (spec.cloud), not a Secret of the namespace"
	}
	if !isZero(spec["backendConfigsFrom"]) {
		return "its backend is configured from Secrets (spec.backendConfigsFrom); Magos keeps state in the kubernetes backend's Secret"
	}
	backend, _, _ := unstructured.NestedMap(spec, "backendConfig")
	if b, _ := backend["disable"].(bool); b {
		return "its backend configuration is disabled (spec.backendConfig.disable): the configuration brings its own backend"
	}
	if c, _ := backend["customConfiguration"].(string); c != "" {
		return "it has a custom backend (spec.backendConfig.customConfiguration)"
	}
	if p, _ := backend["configPath"].(string); p != "" {
		return "its backend reaches another cluster (spec.backendConfig.configPath)"
	}
	if backend != nil {
		// With a backendConfig, tofu-controller uses its secretSuffix as
		// it is, even empty.
		if s, _ := backend["secretSuffix"].(string); s != name {
			return fmt.Sprintf("its state Secret is tfstate-default-%s; Magos reads tfstate-default-%s (import it under the name %s, or move the state)", s, name, s)
		}
	}
	return ""
}

func mapVars(spec map[string]any, ws *magosv1.Workspace, r *Result, skip func(string, string)) {
	vars, _, _ := unstructured.NestedSlice(spec, "vars")
	for i, v := range vars {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		field := fmt.Sprintf("vars[%d]", i)
		switch {
		case m["valueFrom"] != nil:
			from, ok := valueFrom(m["valueFrom"])
			if !ok {
				skip(field+".valueFrom", "only secretKeyRef and configMapKeyRef have an equivalent")
				continue
			}
			ws.Spec.Vars = append(ws.Spec.Vars, magosv1.Variable{Name: name, ValueFrom: from})
		default:
			ws.Spec.Vars = append(ws.Spec.Vars, literal(name, m["value"]))
		}
	}
	if v, ok := spec["values"]; ok && !isZero(v) {
		if b, _ := json.Marshal(v); strings.Contains(string(b), "${{") {
			skip("values", "it is a template over readInputsFromSecrets, which Magos does not render")
		} else {
			ws.Spec.Vars = append(ws.Spec.Vars, literal("values", v))
		}
	}
	from, _, _ := unstructured.NestedSlice(spec, "varsFrom")
	for i, f := range from {
		m, _ := f.(map[string]any)
		ref := VarsFrom{Kind: str(m, "kind"), Name: str(m, "name")}
		ref.Optional, _ = m["optional"].(bool)
		ref.Keys, _, _ = unstructured.NestedStringSlice(m, "varsKeys")
		if ref.Kind != "Secret" && ref.Kind != "ConfigMap" {
			skip(fmt.Sprintf("varsFrom[%d]", i), "kind must be Secret or ConfigMap")
			continue
		}
		r.VarsFrom = append(r.VarsFrom, ref)
	}
}

// literal is a variable of a literal value: a string as is, anything else
// as its JSON, which is an HCL expression.
func literal(name string, value any) magosv1.Variable {
	if s, ok := value.(string); ok {
		return magosv1.Variable{Name: name, Value: &s}
	}
	b, _ := json.Marshal(value)
	return magosv1.Variable{Name: name, Value: new(string(b)), HCL: true}
}

func valueFrom(v any) (*magosv1.VariableSource, bool) {
	m, _ := v.(map[string]any)
	sel := func(key string) (name, k string, optional *bool, ok bool) {
		ref, found := m[key].(map[string]any)
		if !found {
			return "", "", nil, false
		}
		if o, set := ref["optional"].(bool); set {
			optional = &o
		}
		return str(ref, "name"), str(ref, "key"), optional, true
	}
	if name, key, opt, ok := sel("secretKeyRef"); ok {
		return &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: opt}}, true
	}
	if name, key, opt, ok := sel("configMapKeyRef"); ok {
		return &magosv1.VariableSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: opt}}, true
	}
	return nil, false
}

// ExpandVarsFrom adds to ws one variable per key of each reference (its
// varsKeys, "key" or "key:variable", else every key keysOf reads), later
// references winning as in tofu-controller; a key that is not a variable
// name is skipped.
func ExpandVarsFrom(ws *magosv1.Workspace, refs []VarsFrom, keysOf func(VarsFrom) ([]string, error)) ([]Skipped, error) {
	var skipped []Skipped
	for _, ref := range refs {
		keys := ref.Keys
		if len(keys) == 0 {
			var err error
			if keys, err = keysOf(ref); err != nil {
				return nil, err
			}
		}
		for _, pattern := range slices.Sorted(slices.Values(keys)) {
			// tofu-controller's varsKeys may rename: "key:variable".
			key, name, renamed := strings.Cut(pattern, ":")
			if !renamed {
				name = key
			}
			if !variableName(name) || key == "" {
				skipped = append(skipped, Skipped{fmt.Sprintf("varsFrom %s %s key %q", ref.Kind, ref.Name, pattern), "not a variable name"})
				continue
			}
			v := magosv1.Variable{Name: name, ValueFrom: &magosv1.VariableSource{}}
			opt := &ref.Optional
			if ref.Kind == "Secret" {
				v.ValueFrom.SecretKeyRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: key, Optional: opt}
			} else {
				v.ValueFrom.ConfigMapKeyRef = &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: key, Optional: opt}
			}
			ws.Spec.Vars = slices.DeleteFunc(ws.Spec.Vars, func(o magosv1.Variable) bool { return o.Name == name })
			ws.Spec.Vars = append(ws.Spec.Vars, v)
		}
	}
	return skipped, nil
}

// variableNamePattern is the pattern of magosv1.Variable.Name.
var variableNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func variableName(s string) bool { return len(s) <= 128 && variableNamePattern.MatchString(s) }

func mapOutputs(spec map[string]any, ws *magosv1.Workspace, skip func(string, string)) {
	out, _, _ := unstructured.NestedMap(spec, "writeOutputsToSecret")
	if out == nil {
		return
	}
	ws.Spec.Outputs = &magosv1.OutputsSpec{SecretName: str(out, "name")}
	names, _, _ := unstructured.NestedStringSlice(out, "outputs")
	for _, n := range names {
		if strings.Contains(n, ":") {
			skip("writeOutputsToSecret.outputs "+n, "Magos writes an output under its own name (no alias)")
			continue
		}
		ws.Spec.Outputs.Names = append(ws.Spec.Outputs.Names, n)
	}
	for _, f := range []string{"labels", "annotations"} {
		if !isZero(out[f]) {
			skip("writeOutputsToSecret."+f, "the outputs Secret carries Magos's labels only")
		}
	}
}

func mapDependsOn(spec map[string]any, namespace string, ws *magosv1.Workspace, skip func(string, string)) {
	deps, _, _ := unstructured.NestedSlice(spec, "dependsOn")
	for i, d := range deps {
		m, _ := d.(map[string]any)
		if ns := str(m, "namespace"); ns != "" && ns != namespace {
			skip(fmt.Sprintf("dependsOn[%d]", i), "a Workspace depends on Workspaces of its own namespace only")
			continue
		}
		ws.Spec.DependsOn = append(ws.Spec.DependsOn, magosv1.LocalObjectReference{Name: str(m, "name")})
	}
}

func mapRunner(spec map[string]any, ws *magosv1.Workspace, skip func(string, string)) {
	if meta, _, _ := unstructured.NestedMap(spec, "runnerPodTemplate", "metadata"); len(meta) > 0 {
		skip("runnerPodTemplate.metadata", "runner Pods carry spec.runner.podLabels and podAnnotations, which the operator allows")
	}
	pod, _, _ := unstructured.NestedMap(spec, "runnerPodTemplate", "spec")
	if pod == nil {
		return
	}
	runner := &magosv1.RunnerSpec{}
	if sel, _, _ := unstructured.NestedStringMap(pod, "nodeSelector"); len(sel) > 0 {
		runner.NodeSelector = sel
	}
	if tol, ok := pod["tolerations"].([]any); ok && len(tol) > 0 {
		b, _ := json.Marshal(tol)
		if err := json.Unmarshal(b, &runner.Tolerations); err != nil {
			skip("runnerPodTemplate.spec.tolerations", "not tolerations: "+err.Error())
		}
	}
	if res, ok := pod["resources"].(map[string]any); ok && len(res) > 0 {
		b, _ := json.Marshal(res)
		runner.Resources = &corev1.ResourceRequirements{}
		if err := json.Unmarshal(b, runner.Resources); err != nil {
			runner.Resources = nil
			skip("runnerPodTemplate.spec.resources", "not resource requirements: "+err.Error())
		}
	}
	env, _ := pod["env"].([]any)
	for i, e := range env {
		m, _ := e.(map[string]any)
		name, field := str(m, "name"), fmt.Sprintf("runnerPodTemplate.spec.env[%d]", i)
		switch {
		case magosv1.IsReservedEnv(name):
			skip(field, name+" is reserved: Magos or the engine sets it")
		case m["valueFrom"] != nil:
			from, ok := valueFrom(m["valueFrom"])
			if !ok {
				skip(field+".valueFrom", "only secretKeyRef and configMapKeyRef have an equivalent")
				continue
			}
			runner.Env = append(runner.Env, magosv1.EnvEntry{Name: name, ValueFrom: from})
		default:
			runner.Env = append(runner.Env, magosv1.EnvEntry{Name: name, Value: new(str(m, "value"))})
		}
	}
	for _, field := range slices.Sorted(maps.Keys(pod)) {
		switch field {
		case "nodeSelector", "tolerations", "resources", "env":
		case "image":
			skip("runnerPodTemplate.spec.image", "runs use Magos's runner image and the engine image of spec.terraform.version")
		default:
			if !isZero(pod[field]) {
				skip("runnerPodTemplate.spec."+field, "not mapped: set the runner's equivalent in spec.runner if it has one")
			}
		}
	}
	if runner.NodeSelector != nil || runner.Tolerations != nil || runner.Resources != nil || runner.Env != nil {
		ws.Spec.Runner = runner
	}
}

func duration(spec map[string]any, field string, skip func(string, string)) (*metav1.Duration, bool) {
	s := str(spec, field)
	if s == "" {
		return nil, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		skip(field, "not a duration: "+err.Error())
		return nil, false
	}
	return &metav1.Duration{Duration: d}, true
}

func str(m map[string]any, field string) string {
	s, _ := m[field].(string)
	return s
}

func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		return v == ""
	case int64:
		return v == 0
	case float64:
		return v == 0
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

package variableset

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Kinds of the objects a VariableSet references.
const (
	KindSecret    = "Secret"
	KindConfigMap = "ConfigMap"
)

// VariablePrefix is what Terraform and OpenTofu read input variables from.
const VariablePrefix = "TF_VAR_"

// objectRef names a Secret or ConfigMap in the VariableSet's namespace.
type objectRef struct {
	Kind string
	Name string
}

func (o objectRef) String() string { return o.Kind + " " + o.Name }

func compareObjectRefs(a, b objectRef) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
}

// observedObject is what a reconcile learned about one referenced object:
// whether it exists, its resourceVersion and the names of its keys. It never
// holds a value.
type observedObject struct {
	Found           bool
	ResourceVersion string
	// Keys are the keys an environment variable can read, sorted: the data
	// keys of a Secret or ConfigMap.
	Keys []string
	// BinaryKeys are a ConfigMap's binaryData keys, sorted; the kubelet does
	// not resolve configMapKeyRef against them.
	BinaryKeys []string
}

func (o observedObject) hasKey(k string) bool {
	_, ok := slices.BinarySearch(o.Keys, k)
	return ok
}

func (o observedObject) hasBinaryKey(k string) bool {
	_, ok := slices.BinarySearch(o.BinaryKeys, k)
	return ok
}

// terraformIdentifier matches names Terraform accepts for variables (and
// the API accepts for spec.variables[].name).
var terraformIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// referencedObjects lists the objects spec references, sorted and without
// duplicates.
func referencedObjects(spec *magosv1.VariableSetSpec) []objectRef {
	var refs []objectRef
	fromSource := func(s *magosv1.VariableSource) {
		switch {
		case s == nil:
		case s.SecretKeyRef != nil:
			refs = append(refs, objectRef{KindSecret, s.SecretKeyRef.Name})
		case s.ConfigMapKeyRef != nil:
			refs = append(refs, objectRef{KindConfigMap, s.ConfigMapKeyRef.Name})
		}
	}
	for i := range spec.Variables {
		fromSource(spec.Variables[i].ValueFrom)
	}
	for i := range spec.Env {
		fromSource(spec.Env[i].ValueFrom)
	}
	for _, f := range spec.From {
		if ref, ok := wholeObjectRef(f); ok {
			refs = append(refs, ref)
		}
	}
	slices.SortFunc(refs, compareObjectRefs)
	return slices.Compact(refs)
}

func wholeObjectRef(f magosv1.WholeObjectSource) (objectRef, bool) {
	switch {
	case f.SecretRef != nil:
		return objectRef{KindSecret, f.SecretRef.Name}, true
	case f.ConfigMapRef != nil:
		return objectRef{KindConfigMap, f.ConfigMapRef.Name}, true
	}
	return objectRef{}, false
}

// rendered is the status a VariableSet's spec renders to, given what was
// observed of the objects it references.
type rendered struct {
	// Env is sorted by name, one entry per name.
	Env []corev1.EnvVar
	// Sensitive names the entries of Env whose value is sensitive, sorted.
	Sensitive []string
	// References has one entry per referenced object, and per referenced
	// key, sorted by kind, name and key.
	References []magosv1.ReferenceStatus
	// Missing describes each required reference that is missing.
	Missing []string
	// OptionalMissing counts optional references that are missing.
	OptionalMissing int
	// Digest is the inputs digest.
	Digest string
}

// renderedEntry is one environment variable and whether it is sensitive.
type renderedEntry struct {
	env       corev1.EnvVar
	sensitive bool
}

// refKey is one reference: an object, or one key of it.
type refKey struct {
	Kind, Name, Key string
}

// refUse accumulates how a reference is used.
type refUse struct {
	required bool
	notes    []string
}

// renderer builds a rendered from a spec; it is the state of one render call.
type renderer struct {
	objs    map[objectRef]observedObject
	entries map[string]renderedEntry
	refs    map[refKey]*refUse
}

// render renders vs's spec into environment variables and reference
// readiness. Precedence when names collide, lowest first: spec.from in order
// (a later source wins, as with a container's envFrom), then spec.variables,
// then spec.env. It is pure: objs is everything it knows of the cluster.
func render(vs *magosv1.VariableSet, objs map[objectRef]observedObject) rendered {
	r := &renderer{objs: objs, entries: map[string]renderedEntry{}, refs: map[refKey]*refUse{}}
	for _, f := range vs.Spec.From {
		r.wholeObject(f)
	}
	for _, v := range vs.Spec.Variables {
		e := corev1.EnvVar{Name: VariablePrefix + v.Name}
		sensitive := v.Sensitive
		switch {
		case v.ValueFrom != nil:
			var fromSecret bool
			e.ValueFrom, fromSecret = r.keyRef(v.ValueFrom)
			sensitive = sensitive || fromSecret
		case v.Value != nil:
			// HCL values are passed as they are: Terraform parses TF_VAR_
			// values of complex-typed variables as HCL.
			e.Value = *v.Value
		}
		r.entries[e.Name] = renderedEntry{env: e, sensitive: sensitive}
	}
	for _, v := range vs.Spec.Env {
		e := corev1.EnvVar{Name: v.Name}
		sensitive := false
		switch {
		case v.ValueFrom != nil:
			e.ValueFrom, sensitive = r.keyRef(v.ValueFrom)
		case v.Value != nil:
			e.Value = *v.Value
		}
		r.entries[e.Name] = renderedEntry{env: e, sensitive: sensitive}
	}

	var out rendered
	names := make([]string, 0, len(r.entries))
	for n := range r.entries {
		names = append(names, n)
	}
	slices.Sort(names)
	out.Env = make([]corev1.EnvVar, 0, len(names))
	for _, n := range names {
		e := r.entries[n]
		out.Env = append(out.Env, e.env)
		if e.sensitive {
			out.Sensitive = append(out.Sensitive, n)
		}
	}
	r.references(&out)
	out.Digest = inputsDigest(vs.Generation, referencedObjects(&vs.Spec), objs)
	return out
}

// use records one use of a reference.
func (r *renderer) use(kind, name, key string, optional bool, note string) {
	k := refKey{kind, name, key}
	u := r.refs[k]
	if u == nil {
		u = &refUse{}
		r.refs[k] = u
	}
	u.required = u.required || !optional
	if note != "" && !slices.Contains(u.notes, note) {
		u.notes = append(u.notes, note)
	}
}

// keyRef passes a key reference through (a copy, never the value) and says
// whether it reads a Secret.
func (r *renderer) keyRef(s *magosv1.VariableSource) (*corev1.EnvVarSource, bool) {
	switch {
	case s.SecretKeyRef != nil:
		ref := s.SecretKeyRef.DeepCopy()
		r.use(KindSecret, ref.Name, ref.Key, ptr.Deref(ref.Optional, false), "")
		return &corev1.EnvVarSource{SecretKeyRef: ref}, true
	case s.ConfigMapKeyRef != nil:
		ref := s.ConfigMapKeyRef.DeepCopy()
		r.use(KindConfigMap, ref.Name, ref.Key, ptr.Deref(ref.Optional, false), "")
		return &corev1.EnvVarSource{ConfigMapKeyRef: ref}, false
	}
	return nil, false
}

// wholeObject expands a whole Secret or ConfigMap: one TF_VAR_<key> entry
// per key, each a key reference (ConfigMap values are not copied either).
// Keys that are not Terraform identifiers are skipped and noted.
func (r *renderer) wholeObject(f magosv1.WholeObjectSource) {
	ref, ok := wholeObjectRef(f)
	if !ok {
		return
	}
	optional := (f.SecretRef != nil && f.SecretRef.Optional) || (f.ConfigMapRef != nil && f.ConfigMapRef.Optional)
	obj := r.objs[ref]
	var skipped []string
	for _, key := range obj.Keys {
		if !terraformIdentifier.MatchString(key) {
			skipped = append(skipped, key)
			continue
		}
		var optionalRef *bool
		if optional {
			optionalRef = ptr.To(true)
		}
		e := corev1.EnvVar{Name: VariablePrefix + key, ValueFrom: &corev1.EnvVarSource{}}
		if ref.Kind == KindSecret {
			e.ValueFrom.SecretKeyRef = &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: key, Optional: optionalRef}
		} else {
			e.ValueFrom.ConfigMapKeyRef = &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: key, Optional: optionalRef}
		}
		r.entries[e.Name] = renderedEntry{env: e, sensitive: ref.Kind == KindSecret}
	}
	note := ""
	if len(skipped) > 0 {
		note = "skipped keys that are not Terraform identifiers: " + strings.Join(skipped, ", ")
	}
	r.use(ref.Kind, ref.Name, "", optional, note)
	if len(obj.BinaryKeys) > 0 {
		r.use(ref.Kind, ref.Name, "", optional,
			"skipped binaryData keys, which environment variables cannot read: "+strings.Join(obj.BinaryKeys, ", "))
	}
}

// references fills out.References, out.Missing and out.OptionalMissing.
func (r *renderer) references(out *rendered) {
	keys := make([]refKey, 0, len(r.refs))
	for k := range r.refs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b refKey) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Key, b.Key))
	})
	out.References = make([]magosv1.ReferenceStatus, 0, len(keys))
	for _, k := range keys {
		u := r.refs[k]
		obj := r.objs[objectRef{k.Kind, k.Name}]
		st := magosv1.ReferenceStatus{Kind: k.Kind, Name: k.Name, Key: k.Key}
		switch {
		case !obj.Found:
			st.Message = fmt.Sprintf("%s %s not found", k.Kind, k.Name)
		case k.Key != "" && !obj.hasKey(k.Key) && obj.hasBinaryKey(k.Key):
			st.Message = fmt.Sprintf("%s %s has key %s only in binaryData, which environment variables cannot read", k.Kind, k.Name, k.Key)
		case k.Key != "" && !obj.hasKey(k.Key):
			st.Message = fmt.Sprintf("%s %s has no key %s", k.Kind, k.Name, k.Key)
		default:
			st.Ready = true
			st.Message = strings.Join(u.notes, "; ")
		}
		if !st.Ready {
			if u.required {
				out.Missing = append(out.Missing, st.Message)
			} else {
				out.OptionalMissing++
				st.Message += " (optional, missing)"
			}
		}
		out.References = append(out.References, st)
	}
}

// inputsDigest is a sha256 over the VariableSet's generation and the kind,
// name and resourceVersion of every referenced object (an empty version for
// a missing one). It is built from resourceVersions, never from contents, so
// any write to a referenced object (a rotated Secret, an edited ConfigMap)
// changes it, and nothing about the values can be learned from it.
func inputsDigest(generation int64, refs []objectRef, objs map[objectRef]observedObject) string {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "generation %d\n", generation)
	for _, ref := range refs {
		_, _ = fmt.Fprintf(h, "%s %s %s\n", ref.Kind, ref.Name, objs[ref].ResourceVersion)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

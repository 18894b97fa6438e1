package outputs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Output is one root module output as the engine reports it.
type Output struct {
	Sensitive bool
	// Value is the output's JSON value.
	Value json.RawMessage
}

// SecretClient reads and replaces Secrets by name; client-go's
// SecretInterface satisfies it. It needs no create: the workspace-controller
// creates the outputs Secret before a run, and the runner may not create
// Secrets.
type SecretClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
	Update(ctx context.Context, s *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error)
}

// Select returns the Secret data for the outputs named in names (all of
// them when names is empty), the names written (sorted) and the requested
// names the configuration does not have.
func Select(all map[string]Output, names []string) (data map[string][]byte, written, missing []string, err error) {
	if len(names) == 0 {
		for n := range all {
			names = append(names, n)
		}
	}
	data = map[string][]byte{}
	for _, n := range names {
		o, ok := all[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		v, err := encode(o.Value)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("output %q: %w", n, err)
		}
		data[n] = v
		written = append(written, n)
	}
	sort.Strings(written)
	sort.Strings(missing)
	return data, written, missing, nil
}

// encode is a string's raw value, or any other value's compact JSON (as the
// engine wrote it, so that numbers keep their precision).
func encode(v json.RawMessage) ([]byte, error) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("not a JSON string: %w", err)
		}
		return []byte(s), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return nil, fmt.Errorf("not a JSON value: %w", err)
	}
	return buf.Bytes(), nil
}

// Target is the outputs Secret to write.
type Target struct {
	Name      string
	Workspace string
	Owner     metav1.OwnerReference
}

// Write replaces the data of the outputs Secret with data and returns the
// names in data whose value differs from what the Secret held (sorted);
// when none does and no key goes away it leaves the Secret untouched, so
// its resourceVersion moves only with a value. The Secret must exist (the
// workspace-controller creates it before a run). It refuses to overwrite a
// Secret that Magos does not manage for this Workspace.
func Write(ctx context.Context, secrets SecretClient, t Target, data map[string][]byte) (changed []string, err error) {
	const attempts = 5
	for range attempts {
		var sec *corev1.Secret
		sec, err = secrets.Get(ctx, t.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("outputs Secret %s does not exist; the workspace-controller creates it before every run and the runner may not create it", t.Name)
		}
		if err == nil {
			if sec.Labels[magosv1.ManagedByLabel] != magosv1.ManagedByValue || sec.Labels[magosv1.WorkspaceLabel] != t.Workspace || !hasOwner(sec.OwnerReferences, t.Owner) {
				return nil, fmt.Errorf("outputs Secret %s is not managed by Magos for Workspace %s; refusing to overwrite it", t.Name, t.Workspace)
			}
			changed = Changed(sec.Data, data)
			if len(changed) == 0 && len(sec.Data) == len(data) {
				return nil, nil
			}
			sec.Data = data
			sec.StringData = nil
			_, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
		}
		if !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("writing outputs Secret %s: %w", t.Name, err)
	}
	return changed, nil
}

// Changed returns the names in after whose value is not the one in before
// (new names included), sorted. It compares bytes and keeps nothing of
// them.
func Changed(before, after map[string][]byte) []string {
	var changed []string
	for name, v := range after {
		if old, ok := before[name]; !ok || !bytes.Equal(old, v) {
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	return changed
}

func hasOwner(refs []metav1.OwnerReference, o metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.UID == o.UID {
			return true
		}
	}
	return false
}

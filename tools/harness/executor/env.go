package executor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// envVar is one resolved environment variable.
type envVar struct {
	Name, Value string
}

// envList is an ordered environment in which a later Set of a name replaces
// the earlier value in place, as the kubelet's map does.
type envList struct {
	vars  []envVar
	index map[string]int
}

// Set adds or replaces name.
func (l *envList) Set(name, value string) {
	if l.index == nil {
		l.index = map[string]int{}
	}
	if i, ok := l.index[name]; ok {
		l.vars[i].Value = value
		return
	}
	l.index[name] = len(l.vars)
	l.vars = append(l.vars, envVar{Name: name, Value: value})
}

// Get returns the value of name.
func (l *envList) Get(name string) (string, bool) {
	i, ok := l.index[name]
	if !ok {
		return "", false
	}
	return l.vars[i].Value, true
}

// Environ returns the list as NAME=value strings for os/exec.
func (l *envList) Environ() []string {
	out := make([]string, 0, len(l.vars))
	for _, v := range l.vars {
		out = append(out, v.Name+"="+v.Value)
	}
	return out
}

// configError is an error that keeps a container from being created: the
// kubelet reports it as the waiting reason CreateContainerConfigError, or
// keeps the container ContainerCreating for a volume it cannot mount.
type configError struct {
	err   error
	mount bool
}

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// envResolver resolves a container's environment the way the kubelet's
// makeEnvironmentVariables does: envFrom first, then env, each value
// expanded against the variables defined before it.
type envResolver struct {
	reader client.Reader
	pod    *corev1.Pod
	// cached objects, as the kubelet reads each Secret and ConfigMap once
	// per container start
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
}

// resolveEnv returns the container's environment. Errors that the kubelet
// reports as CreateContainerConfigError are *configError.
func resolveEnv(ctx context.Context, reader client.Reader, pod *corev1.Pod, c *corev1.Container) (*envList, error) {
	r := &envResolver{reader: reader, pod: pod, secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{}}
	return r.resolve(ctx, c)
}

func (r *envResolver) resolve(ctx context.Context, c *corev1.Container) (*envList, error) {
	env := &envList{}
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			cm, err := r.configMap(ctx, from.ConfigMapRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isOptional(from.ConfigMapRef.Optional) {
					continue
				}
				return nil, asConfigError(err)
			}
			for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
				setFromSource(env, from.Prefix+k, cm.Data[k])
			}
		case from.SecretRef != nil:
			s, err := r.secret(ctx, from.SecretRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isOptional(from.SecretRef.Optional) {
					continue
				}
				return nil, asConfigError(err)
			}
			for _, k := range slices.Sorted(maps.Keys(s.Data)) {
				setFromSource(env, from.Prefix+k, string(s.Data[k]))
			}
		}
	}
	for _, v := range c.Env {
		value, skip, err := r.value(ctx, v, env)
		if err != nil {
			return nil, err
		}
		if !skip {
			env.Set(v.Name, value)
		}
	}
	return env, nil
}

// value resolves one env entry; skip is true for an optional reference
// that does not resolve.
func (r *envResolver) value(ctx context.Context, v corev1.EnvVar, env *envList) (value string, skip bool, err error) {
	if v.ValueFrom == nil {
		if v.Value == "" {
			return "", false, nil
		}
		return expand(v.Value, env.Get), false, nil
	}
	from := v.ValueFrom
	switch {
	case from.FieldRef != nil:
		value, err := podFieldValue(r.pod, from.FieldRef.FieldPath)
		if err != nil {
			return "", false, &configError{err: err}
		}
		return value, false, nil
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := r.secret(ctx, ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isOptional(ref.Optional) {
				return "", true, nil
			}
			return "", false, asConfigError(err)
		}
		data, ok := s.Data[ref.Key]
		if !ok {
			if isOptional(ref.Optional) {
				return "", true, nil
			}
			return "", false, &configError{err: fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, r.pod.Namespace, ref.Name)}
		}
		return string(data), false, nil
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := r.configMap(ctx, ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isOptional(ref.Optional) {
				return "", true, nil
			}
			return "", false, asConfigError(err)
		}
		data, ok := cm.Data[ref.Key]
		if !ok {
			if isOptional(ref.Optional) {
				return "", true, nil
			}
			return "", false, &configError{err: fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, r.pod.Namespace, ref.Name)}
		}
		return data, false, nil
	case from.ResourceFieldRef != nil:
		return "", false, &configError{err: fmt.Errorf("env %s: resourceFieldRef is not supported by the local executor", v.Name)}
	default:
		return "", false, &configError{err: fmt.Errorf("env %s: unsupported valueFrom", v.Name)}
	}
}

func (r *envResolver) secret(ctx context.Context, name string) (*corev1.Secret, error) {
	if s, ok := r.secrets[name]; ok {
		return s, nil
	}
	s := &corev1.Secret{}
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: r.pod.Namespace, Name: name}, s); err != nil {
		return nil, err
	}
	r.secrets[name] = s
	return s, nil
}

func (r *envResolver) configMap(ctx context.Context, name string) (*corev1.ConfigMap, error) {
	if cm, ok := r.configMaps[name]; ok {
		return cm, nil
	}
	cm := &corev1.ConfigMap{}
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: r.pod.Namespace, Name: name}, cm); err != nil {
		return nil, err
	}
	r.configMaps[name] = cm
	return cm, nil
}

// asConfigError marks a NotFound as a container configuration error; other
// errors (the apiserver being unreachable) are retried as they are.
func asConfigError(err error) error {
	if apierrors.IsNotFound(err) {
		return &configError{err: err}
	}
	return err
}

// setFromSource sets a variable from envFrom; the kubelet skips keys that
// are not valid variable names.
func setFromSource(env *envList, name, value string) {
	if name == "" || strings.ContainsRune(name, '=') {
		return
	}
	env.Set(name, value)
}

func isOptional(b *bool) bool { return b != nil && *b }

// podFieldValue resolves a fieldRef path the kubelet supports.
func podFieldValue(pod *corev1.Pod, path string) (string, error) {
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs":
		return localIP, nil
	default:
		return "", fmt.Errorf("unsupported fieldRef path %q", path)
	}
}

// subscript parses `prefix['key']`.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// expand replaces $(NAME) references with lookup's values, as Kubernetes
// expands env values, command and args: $$ is an escaped $, and a
// reference to an undefined name is left as it is.
func expand(input string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(input); i++ {
		if input[i] != '$' || i+1 == len(input) {
			b.WriteByte(input[i])
			continue
		}
		switch input[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(input[i+2:], ')')
			if end < 0 {
				b.WriteString(input[i:])
				return b.String()
			}
			ref := input[i : i+3+end]
			if v, ok := lookup(input[i+2 : i+2+end]); ok && end > 0 {
				b.WriteString(v)
			} else {
				b.WriteString(ref)
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

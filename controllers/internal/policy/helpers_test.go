package policy_test

import "sigs.k8s.io/yaml"

// yamlUnmarshal decodes YAML into v through JSON, as Kubernetes does.
func yamlUnmarshal(data []byte, v any) error { return yaml.Unmarshal(data, v) }

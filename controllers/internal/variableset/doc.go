// Package variableset is the variableset-controller: it validates every
// Secret and ConfigMap a VariableSet references and renders its status:
// the TF_VAR_<name> and plain environment variables (literal values, or
// valueFrom key references that the kubelet resolves at pod start, never
// the bytes), the names of the sensitive ones, the readiness of every
// reference and an inputs digest built from the referenced objects'
// resourceVersions. Secrets and ConfigMaps are watched through a
// metadata-only cache; their key names are read uncached, one object at a
// time, and no value is kept, logged or written anywhere.
package variableset

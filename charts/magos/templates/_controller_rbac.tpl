{{/*
RBAC of a controller: the ClusterRole and ClusterRoleBinding controller-gen
generated (files/role.yaml), or with rbac.namespaced a Role and RoleBinding
per watched namespace plus a ClusterRole of the cluster-scoped reads, and
the leader election Role in the release namespace. Rendered unless
rbac.create (or global.rbac.create) is false.
*/}}
{{- define "magos.controllerRBAC" -}}
{{- $name := include "magos.fullname" . -}}
{{- $sa := include "magos.serviceAccountName" . -}}
{{- $watch := include "magos.watchNamespaces" . -}}
{{- $namespaced := eq (include "magos.namespacedRBAC" .) "true" -}}
{{- $split := fromYaml (include "magos.splitRules" .) }}
{{- if or (not $namespaced) $split.cluster }}
---
{{- if $namespaced }}
# rbac.namespaced: only read access to cluster-scoped resources is granted
# cluster-wide; everything else by the Roles in the watched namespaces.
{{- end }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $name }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
rules:
  {{- if $namespaced }}
  {{- toYaml $split.cluster | nindent 2 }}
  {{- else }}
  {{- include "magos.rbacRules" (dict "ctx" . "kind" "ClusterRole") | nindent 2 }}
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $name }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $name }}
subjects:
  - kind: ServiceAccount
    name: {{ $sa }}
    namespace: {{ .Release.Namespace }}
{{- end }}
{{- if $namespaced }}
{{- range $ns := splitList "," $watch }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}
  namespace: {{ $ns }}
  labels:
    {{- include "magos.labels" $ | nindent 4 }}
rules:
  {{- toYaml $split.namespaced | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}
  namespace: {{ $ns }}
  labels:
    {{- include "magos.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}
subjects:
  - kind: ServiceAccount
    name: {{ $sa }}
    namespace: {{ $.Release.Namespace }}
{{- end }}
{{- end }}
---
# Leader election: the controller's Lease in the release namespace.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}-leader-election
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
rules:
  {{- include "magos.rbacRules" (dict "ctx" . "kind" "Role") | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}-leader-election
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}-leader-election
subjects:
  - kind: ServiceAccount
    name: {{ $sa }}
    namespace: {{ .Release.Namespace }}
{{- end }}

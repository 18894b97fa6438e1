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

{{/*
magos.writeScopePolicy: a ValidatingAdmissionPolicy refusing every write
(create, update, delete) by the controller's ServiceAccount in the
protected namespaces (rbac.protectedNamespaces, else
global.rbac.protectedNamespaces; the release namespace is never one). A
ClusterRole grants its Secret, Job and RBAC writes in every namespace; this
takes kube-system, flux-system and the like out of them, whatever the
controller is made to do. Rendered with the controller's RBAC.
*/}}
{{- define "magos.writeScopePolicy" -}}
{{- $g := (.Values.global | default dict).rbac | default dict -}}
{{- $sub := (.Values.rbac | default dict).protectedNamespaces -}}
{{- $protected := without (kindIs "slice" $sub | ternary $sub ($g.protectedNamespaces | default list)) .Release.Namespace -}}
{{- if $protected }}
{{- $name := printf "%s-write-scope" (include "magos.fullname" .) }}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {{ $name }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector:
      matchExpressions:
        - key: kubernetes.io/metadata.name
          operator: In
          values: {{ toJson $protected }}
    resourceRules:
      - apiGroups: ["*"]
        apiVersions: ["*"]
        operations: ["CREATE", "UPDATE", "DELETE"]
        resources: ["*/*"]
  matchConditions:
    - name: this-controller
      expression: request.userInfo.username == {{ printf "system:serviceaccount:%s:%s" .Release.Namespace (include "magos.serviceAccountName" .) | squote }}
  validations:
    - expression: "false"
      messageExpression: >-
        'the Magos ' + {{ .Chart.Name | squote }} + ' may not write in namespace ' + request.namespace +
        ' (a protected namespace: rbac.protectedNamespaces)'
      reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {{ $name }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
spec:
  policyName: {{ $name }}
  validationActions: [Deny]
{{- end }}
{{- end }}

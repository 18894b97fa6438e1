{{/*
Shared templates of the controller subcharts. Every subchart renders
"magos.controller" with its own context; the subchart's name (for example
workspace-controller) names its Deployment, ServiceAccount, RBAC and
Service, and files/role.yaml holds the RBAC that controller-gen generates
from the controller's markers (copied by `make generate`).
*/}}

{{- define "magos.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: magos
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{- define "magos.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* magos.fullname is <release>-<controller>, e.g. magos-workspace-controller. */}}
{{- define "magos.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "magos.image" -}}
{{- $g := (.Values.global | default dict).image | default dict -}}
{{- $repo := .Values.image.repository | default (printf "%s/%s" ($g.repository | default "ghcr.io/magos-dev") .Chart.Name) -}}
{{- $tag := .Values.image.tag | default $g.tag | default .Chart.AppVersion -}}
{{- printf "%s:%s" $repo $tag }}
{{- end }}

{{/* magos.rbacRules returns the rules of the first document of kind in files/role.yaml. */}}
{{- define "magos.rbacRules" -}}
{{- $kind := .kind -}}
{{- range $doc := splitList "\n---\n" (.ctx.Files.Get "files/role.yaml") -}}
{{- $obj := fromYaml $doc -}}
{{- if eq ($obj.kind | default "") $kind }}
{{- toYaml $obj.rules }}
{{- end }}
{{- end }}
{{- end }}

{{- define "magos.controller" -}}
{{- $name := include "magos.fullname" . -}}
{{- $g := .Values.global | default dict -}}
{{- $sm := $g.serviceMonitor | default dict -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
  {{- with .Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $name }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
rules:
  {{- include "magos.rbacRules" (dict "ctx" . "kind" "ClusterRole") | nindent 2 }}
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
    name: {{ $name }}
    namespace: {{ .Release.Namespace }}
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
    name: {{ $name }}
    namespace: {{ .Release.Namespace }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      {{- include "magos.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "magos.selectorLabels" . | nindent 8 }}
      {{- with .Values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ $name }}
      {{- with $g.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        runAsNonRoot: true
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: manager
          image: {{ include "magos.image" . }}
          imagePullPolicy: {{ .Values.image.pullPolicy | default (($g.image | default dict).pullPolicy) | default "IfNotPresent" }}
          args:
            - --metrics-bind-address=:8080
            - --health-probe-bind-address=:8081
            - --leader-elect={{ .Values.leaderElection.enabled }}
            - --leader-election-namespace={{ .Release.Namespace }}
            - --concurrent={{ .Values.concurrency }}
            {{- with .Values.watchNamespace }}
            - --watch-namespace={{ . }}
            {{- end }}
            {{- with .Values.runner }}
            - --runner-image={{ .image }}
            - --runner-versions-dir={{ .versionsDir }}
            - --default-engine-version={{ .defaultEngineVersion }}
            - --run-timeout={{ .timeout }}
            - --job-ttl={{ .jobTTL }}
            - --retry-interval={{ .retryInterval }}
            {{- end }}
            {{- range .Values.extraArgs }}
            - {{ . | quote }}
            {{- end }}
          ports:
            - name: metrics
              containerPort: 8080
            - name: probes
              containerPort: 8081
          livenessProbe:
            httpGet:
              path: /healthz
              port: probes
          readinessProbe:
            httpGet:
              path: /readyz
              port: probes
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: ["ALL"]
          {{- with .Values.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}-metrics
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
spec:
  selector:
    {{- include "magos.selectorLabels" . | nindent 4 }}
  ports:
    - name: metrics
      port: 8080
      targetPort: metrics
{{- if or .Values.serviceMonitor.enabled $sm.enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "magos.labels" . | nindent 4 }}
    {{- with (merge (dict) (.Values.serviceMonitor.labels | default dict) ($sm.labels | default dict)) }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "magos.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: metrics
      interval: {{ .Values.serviceMonitor.interval | default $sm.interval | default "30s" }}
{{- end }}
{{- end }}

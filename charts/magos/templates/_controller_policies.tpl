{{/*
magos.podDisruptionBudget: a PodDisruptionBudget for the controller's Pods,
on when podDisruptionBudget.enabled is true, or unset and replicas > 1 (a
single replica would block every node drain).
*/}}
{{- define "magos.podDisruptionBudget" -}}
{{- $pdb := .Values.podDisruptionBudget | default dict -}}
{{- if eq (include "magos.setting" (dict "sub" $pdb.enabled "default" (gt (int .Values.replicas) 1))) "true" }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "magos.unitName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "magos.unitLabels" . | nindent 4 }}
spec:
  {{- if not (kindIs "invalid" $pdb.maxUnavailable) }}
  maxUnavailable: {{ $pdb.maxUnavailable }}
  {{- else }}
  minAvailable: {{ $pdb.minAvailable | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "magos.unitSelectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}

{{/*
magos.networkPolicy: with networkPolicy.enabled (the default), a
NetworkPolicy selecting the controller's Pods that admits ingress only to
the metrics port (from networkPolicy.metricsFrom; when empty from every Pod
but Magos's runner Pods) and, with the artifact proxy, from runner Pods to
the proxy's port; with networkPolicy.egress.enabled also egress only to the
Kubernetes API (networkPolicy.apiServer) and networkPolicy.extraEgress.
*/}}
{{- define "magos.networkPolicy" -}}
{{- with .Values.networkPolicy }}
{{- if .enabled }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "magos.unitName" $ }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "magos.unitLabels" $ | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "magos.unitSelectorLabels" $ | nindent 6 }}
  policyTypes:
    - Ingress
    {{- if (.egress | default dict).enabled }}
    - Egress
    {{- end }}
  ingress:
    - ports:
        - protocol: TCP
          port: metrics
      from:
      {{- with .metricsFrom }}
        {{- toYaml . | nindent 8 }}
      {{- else }}
        # Every Pod but runner Pods, whose configuration code could
        # otherwise read every tenant's metrics.
        - namespaceSelector: {}
          podSelector:
            matchExpressions:
              - key: magos.dev/workspace
                operator: DoesNotExist
      {{- end }}
    {{- with $.Values.artifactProxy }}
    {{- if .enabled }}
    # Runner Pods of every namespace fetch their artifacts here; the proxy
    # authenticates each by its Pod-bound token.
    - ports:
        - protocol: TCP
          port: artifacts
      from:
        - namespaceSelector: {}
          podSelector:
            matchLabels:
              app.kubernetes.io/managed-by: magos
            matchExpressions:
              - key: magos.dev/workspace
                operator: Exists
    {{- end }}
    {{- end }}
  {{- if (.egress | default dict).enabled }}
  egress:
    - ports:
        {{- range .apiServer.ports }}
        - protocol: TCP
          port: {{ . }}
        {{- end }}
      {{- with .apiServer.cidrs }}
      to:
        {{- range . }}
        - ipBlock:
            cidr: {{ . }}
        {{- end }}
      {{- end }}
    {{- with .extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
magos.monitors: a Prometheus Operator ServiceMonitor (serviceMonitor or
global.serviceMonitor enabled) or PodMonitor (podMonitor or
global.podMonitor) for the controller's metrics; not both.
*/}}
{{- define "magos.monitors" -}}
{{- $g := .Values.global | default dict -}}
{{- $monitors := list -}}
{{- range $kind, $key := dict "ServiceMonitor" "serviceMonitor" "PodMonitor" "podMonitor" -}}
{{- $sub := index $.Values $key | default dict -}}
{{- $glob := index $g $key | default dict -}}
{{- if or $sub.enabled $glob.enabled -}}
{{- $monitors = append $monitors (dict "kind" $kind "labels" (merge (dict) ($sub.labels | default dict) ($glob.labels | default dict)) "interval" ($sub.interval | default $glob.interval | default "30s")) -}}
{{- end -}}
{{- end -}}
{{- if gt (len $monitors) 1 -}}
{{- fail (printf "%s: enable either serviceMonitor or podMonitor, not both" .Chart.Name) -}}
{{- end -}}
{{- range $monitors }}
---
apiVersion: monitoring.coreos.com/v1
kind: {{ .kind }}
metadata:
  name: {{ include "magos.unitName" $ }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "magos.unitLabels" $ | nindent 4 }}
    {{- with .labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "magos.unitSelectorLabels" $ | nindent 6 }}
  {{ ternary "endpoints" "podMetricsEndpoints" (eq .kind "ServiceMonitor") }}:
    - port: metrics
      interval: {{ .interval }}
{{- end }}
{{- end }}

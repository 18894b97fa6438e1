{{/*
magos.deployment is the Deployment of a unit (the main Deployment or a
shard, see magos.unitName): the manager container with its flags, probes,
hardened security contexts (podSecurityContext, securityContext) and the
pod settings of the values.
*/}}
{{- define "magos.deployment" -}}
{{- $g := .Values.global | default dict -}}
{{- $watch := include "magos.watchNamespaces" . -}}
{{- $log := .Values.log | default dict -}}
{{- $glog := $g.log | default dict }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "magos.unitName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "magos.unitLabels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      {{- include "magos.unitSelectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "magos.unitSelectorLabels" . | nindent 8 }}
        {{- with .Shard }}
        magos.dev/shard: {{ . }}
        {{- end }}
        {{- with omit (.Values.podLabels | default dict) "app.kubernetes.io/name" "app.kubernetes.io/instance" }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with .Values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "magos.serviceAccountName" . }}
      {{- with .Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $g.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.podSecurityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: manager
          image: {{ include "magos.image" . }}
          imagePullPolicy: {{ .Values.image.pullPolicy | default (($g.image | default dict).pullPolicy) | default "IfNotPresent" }}
          args:
            - --metrics-bind-address=:8080
            - --health-probe-bind-address=:8081
            - --leader-elect={{ .Values.leaderElection.enabled }}
            - --leader-election-namespace={{ .Release.Namespace }}
            {{- if .Shard }}
            - --watch-label-selector=sharding.fluxcd.io/key={{ .Shard }}
            - --shard={{ .Shard }}
            {{- else if .Values.shards }}
            - "--watch-label-selector=!sharding.fluxcd.io/key"
            {{- end }}
            - --concurrent={{ .Values.concurrency }}
            - --zap-log-level={{ include "magos.setting" (dict "sub" $log.level "global" $glog.level "default" "info") }}
            - --zap-encoder={{ include "magos.setting" (dict "sub" $log.encoding "global" $glog.encoding "default" "json") }}
            {{- with $watch }}
            - --watch-namespaces={{ . }}
            {{- end }}
            {{- with $g.eventsAddr }}
            - --events-addr={{ . }}
            {{- end }}
            {{- $root := . }}
            {{- with .Values.runner }}
            - --runner-image={{ include "magos.releaseImage" (dict "ref" .image "ctx" $root) }}
            {{- with .imagePullSecrets }}
            - --runner-image-pull-secrets={{ join "," . }}
            {{- end }}
            - --runner-versions-dir={{ .versionsDir }}
            - --default-engine-version={{ .defaultEngineVersion }}
            {{- with (.resources | default dict).requests }}
            - --runner-cpu-request={{ .cpu | default "0" }}
            - --runner-memory-request={{ .memory | default "0" }}
            {{- end }}
            {{- with .shutdownWait }}
            - --runner-shutdown-wait={{ . }}
            {{- end }}
            - --run-timeout={{ .timeout }}
            - --max-run-timeout={{ .maxTimeout }}
            - --job-ttl={{ .jobTTL }}
            - --retry-interval={{ .retryInterval }}
            {{- range $engine, $image := .engineImages }}
            - {{ printf "--engine-image=%s=%s" $engine (include "magos.releaseImage" (dict "ref" $image "ctx" $root)) | quote }}
            {{- end }}
            {{- end }}
            {{- with .Values.runs }}
            - --max-concurrent-runs={{ .maxConcurrent }}
            - --max-concurrent-runs-per-namespace={{ .maxConcurrentPerNamespace }}
            - --max-concurrent-runs-per-project={{ .maxConcurrentPerProject }}
            - --requested-plan-interval={{ .requestedPlanInterval }}
            - --drift-jitter={{ .driftJitter }}
            - --max-plan-chunks={{ .maxPlanChunks }}
            - --max-plans-per-namespace-per-minute={{ .maxPlansPerNamespacePerMinute }}
            - --min-interval={{ .minInterval }}
            {{- end }}
            {{- with .Values.guards }}
            - --require-project={{ .requireProject | default false }}
            {{- with .requireProjectNamespaceSelector }}
            - --require-project-namespace-selector={{ . }}
            {{- end }}
            - --no-cross-namespace-refs={{ ternary .noCrossNamespaceRefs true (kindIs "bool" .noCrossNamespaceRefs) }}
            {{- with .allowedRunnerImages }}
            {{- /* The runner image the operator chose is always allowed. */}}
            {{- $patterns := list (include "magos.releaseImage" (dict "ref" $root.Values.runner.image "ctx" $root)) }}
            {{- range . }}
            {{- $patterns = append $patterns (include "magos.releaseImage" (dict "ref" . "ctx" $root)) }}
            {{- end }}
            - --allowed-runner-images={{ join "," (uniq $patterns) }}
            {{- end }}
            {{- with .namespacedPoliciesNamespaceSelector }}
            - --namespaced-policies-namespace-selector={{ . }}
            {{- end }}
            {{- with .clusterPolicySelector }}
            - --cluster-policy-selector={{ . }}
            {{- end }}
            - --allow-destroy-skip-gate={{ .allowDestroySkipGate | default false }}
            - --forbid-runner-cli-config={{ .forbidRunnerCLIConfig | default false }}
            - --always-separate-plan-identity={{ .alwaysSeparatePlanIdentity | default false }}
            {{- with .allowedPriorityClasses }}
            - --allowed-runner-priority-classes={{ join "," . }}
            {{- end }}
            {{- with .allowedTolerationKeys }}
            - --allowed-runner-toleration-keys={{ join "," . }}
            {{- end }}
            {{- with .allowedNodeLabelKeys }}
            - --allowed-runner-node-label-keys={{ join "," . }}
            {{- end }}
            {{- with .allowedPodLabelKeys }}
            - --allowed-runner-pod-label-keys={{ join "," . }}
            {{- end }}
            {{- with .allowedPodAnnotationKeys }}
            - --allowed-runner-pod-annotation-keys={{ join "," . }}
            {{- end }}
            {{- end }}
            {{- if has .Chart.Name (list "workspace-controller" "workspaceset-controller") }}
            {{- with $g.artifactHosts }}
            - --artifact-hosts={{ join "," . }}
            {{- end }}
            {{- end }}
            {{- with .Values.artifactProxy }}
            {{- if .enabled }}
            - --artifact-proxy-bind-address=:{{ .port }}
            - --artifact-proxy-url={{ include "magos.artifactProxyURL" $ }}
            {{- end }}
            {{- end }}
            {{- range .Values.extraArgs }}
            - {{ . | quote }}
            {{- end }}
          ports:
            - name: metrics
              containerPort: 8080
            - name: probes
              containerPort: 8081
            {{- with .Values.artifactProxy }}
            {{- if .enabled }}
            - name: artifacts
              containerPort: {{ .port }}
            {{- end }}
            {{- end }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: probes
          readinessProbe:
            httpGet:
              path: /readyz
              port: probes
          {{- with .Values.securityContext }}
          securityContext:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with .Values.extraEnv }}
          env:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with .Values.extraVolumeMounts }}
          volumeMounts:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with .Values.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
      {{- with .Values.extraVolumes }}
      volumes:
        {{- toYaml . | nindent 8 }}
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
{{- end }}

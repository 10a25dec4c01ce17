{{/*
Deployment of one service: the image's non-root user, a read-only root filesystem with a writable /tmp,
every capability dropped, probes on the service port (startup covers migrations at start), and the
configuration from the chart's ConfigMap and the existing Secret.
*/}}
{{- define "common.deployment" -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "common.fullname" . }}
  labels:
    {{- include "common.labels" . | nindent 4 }}
    app.kubernetes.io/component: server
spec:
  {{- if not .Values.autoscaling.enabled }}
  replicas: {{ .Values.replicaCount }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  selector:
    matchLabels:
      {{- include "common.serverSelectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "common.labels" . | nindent 8 }}
        app.kubernetes.io/component: server
        {{- with .Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # A changed ConfigMap rolls the pods.
        checksum/config: {{ include "common.configMap" . | sha256sum }}
        {{- with .Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- include "common.podSpec" . | trim | nindent 6 }}
      serviceAccountName: {{ include "common.serviceAccountName" . }}
      automountServiceAccountToken: false
      # Longer than SHUTDOWN_TIMEOUT_MS: the service drains in-flight work before it exits.
      terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
      {{- if .Values.topologySpread.enabled }}
      topologySpreadConstraints:
        {{- range .Values.topologySpread.topologyKeys }}
        - maxSkew: {{ $.Values.topologySpread.maxSkew }}
          topologyKey: {{ . }}
          whenUnsatisfiable: {{ $.Values.topologySpread.whenUnsatisfiable }}
          labelSelector:
            matchLabels:
              {{- include "common.serverSelectorLabels" $ | nindent 14 }}
          matchLabelKeys:
            - pod-template-hash
        {{- end }}
      {{- end }}
      {{- with .Values.affinity }}
      affinity:
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
      {{- with .Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      containers:
        - name: {{ include "common.name" . }}
          image: {{ include "common.image" . }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          command: ["node", "services/{{ include "common.name" . }}/dist/main.js"]
          ports:
            - name: http
              containerPort: {{ .Values.ports.http }}
              protocol: TCP
            - name: metrics
              containerPort: {{ .Values.ports.metrics }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "common.fullname" . }}
            - secretRef:
                name: {{ include "common.secretName" . }}
          env:
            - name: PORT
              value: {{ .Values.ports.http | quote }}
            - name: METRICS_PORT
              value: {{ .Values.ports.metrics | quote }}
            {{- with .Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          startupProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml .Values.probes.startup | nindent 12 }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml .Values.probes.liveness | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            {{- toYaml .Values.probes.readiness | nindent 12 }}
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
          {{- include "common.containerSecurity" . | nindent 10 }}
{{- end -}}

{{/* Pod-level settings shared by the Deployment and the migrations Job. */}}
{{- define "common.podSpec" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
volumes:
  # The root filesystem is read-only; Node and its libraries may still want a temporary directory.
  - name: tmp
    emptyDir:
      sizeLimit: 64Mi
  {{- with .Values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* Container-level hardening and mounts shared by the Deployment and the migrations Job. */}}
{{- define "common.containerSecurity" -}}
securityContext:
  {{- toYaml .Values.containerSecurityContext | nindent 2 }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  {{- with .Values.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/*
Migrations as a hook Job, before the new pods start: `node services/<name>/dist/migrate.js` applies the
service's pending migrations under a PostgreSQL advisory lock and exits. It runs before the chart's
ConfigMap and ServiceAccount exist (pre-install), so it reads only the Secret and inline variables.
*/}}
{{- define "common.migrationsJob" -}}
{{- if .Values.migrations.enabled }}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ include "common.fullname" . }}-migrate
  labels:
    {{- include "common.labels" . | nindent 4 }}
    app.kubernetes.io/component: migrations
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-5"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  backoffLimit: {{ .Values.migrations.backoffLimit }}
  activeDeadlineSeconds: {{ .Values.migrations.activeDeadlineSeconds }}
  ttlSecondsAfterFinished: 86400
  template:
    metadata:
      labels:
        {{- include "common.labels" . | nindent 8 }}
        app.kubernetes.io/component: migrations
    spec:
      {{- include "common.podSpec" . | trim | nindent 6 }}
      restartPolicy: Never
      automountServiceAccountToken: false
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: migrate
          image: {{ include "common.image" . }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          command: ["node", "services/{{ include "common.name" . }}/dist/migrate.js"]
          envFrom:
            - secretRef:
                name: {{ include "common.secretName" . }}
          env:
            - name: NODE_ENV
              value: {{ .Values.nodeEnv | quote }}
            - name: LOG_LEVEL
              value: {{ .Values.logLevel | quote }}
          resources:
            {{- toYaml .Values.migrations.resources | nindent 12 }}
          {{- include "common.containerSecurity" . | nindent 10 }}
{{- end }}
{{- end -}}

{{- define "common.serviceAccount" -}}
{{- if .Values.serviceAccount.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "common.serviceAccountName" . }}
  labels:
    {{- include "common.labels" . | nindent 4 }}
  {{- with .Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: false
{{- end }}
{{- end -}}

{{/*
Non-secret configuration. NODE_ENV, LOG_LEVEL and the shutdown and migration switches come from the
chart's top-level values; `config` adds the service's own variables (values may use templates, e.g.
the gateway's upstream URLs). Secrets never go here: see existingSecret.
*/}}
{{- define "common.configMap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "common.fullname" . }}
  labels:
    {{- include "common.labels" . | nindent 4 }}
data:
  NODE_ENV: {{ .Values.nodeEnv | quote }}
  LOG_LEVEL: {{ .Values.logLevel | quote }}
  # With the hook Job on, it migrates before the new pods start and the pods skip migrating.
  MIGRATE_ON_START: {{ not .Values.migrations.enabled | quote }}
  SHUTDOWN_TIMEOUT_MS: {{ .Values.shutdownTimeoutMs | quote }}
  {{- with (.Values.global).amqpNamespace }}
  AMQP_NAMESPACE: {{ . | quote }}
  {{- end }}
  {{- with .Values.otlpEndpoint | default (.Values.global).otlpEndpoint }}
  OTEL_EXPORTER_OTLP_ENDPOINT: {{ . | quote }}
  {{- end }}
  {{- $prepared := .Values.databasePreparedStatements }}
  {{- if kindIs "invalid" $prepared }}
  {{- $prepared = (.Values.global).databasePreparedStatements }}
  {{- end }}
  {{- if and (not (kindIs "invalid" $prepared)) (not (hasKey (.Values.config | default dict) "DATABASE_PREPARED_STATEMENTS")) }}
  DATABASE_PREPARED_STATEMENTS: {{ $prepared | quote }}
  {{- end }}
  {{- range $key, $value := .Values.config }}
  {{- if not (kindIs "invalid" $value) }}
  {{ $key }}: {{ include "common.tplvalues" (dict "value" (toString $value) "context" $) | quote }}
  {{- end }}
  {{- end }}
{{- end -}}

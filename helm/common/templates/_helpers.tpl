{{/*
Names and labels. Every service chart is named after its service (.Chart.Name), and the pods carry
app.kubernetes.io/name=<service>: the NetworkPolicies of the other charts find the gateway (and orders
finds payments) by that label, whether the charts are installed alone or through the umbrella chart.
*/}}

{{- define "common.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-<service>, or <service> when the release is named like the service. */}}
{{- define "common.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "common.selectorLabels" -}}
app.kubernetes.io/name: {{ include "common.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "common.labels" -}}
{{ include "common.selectorLabels" . }}
app.kubernetes.io/part-of: seller-api
app.kubernetes.io/version: {{ include "common.imageTag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The server pods only (the migrations Job shares the name and instance labels, not this one). */}}
{{- define "common.serverSelectorLabels" -}}
{{ include "common.selectorLabels" . }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "common.imageTag" -}}
{{- .Values.image.tag | default (.Values.global).imageTag | default .Chart.AppVersion -}}
{{- end -}}

{{- define "common.image" -}}
{{- $registry := .Values.image.registry | default (.Values.global).imageRegistry -}}
{{- if $registry -}}
{{- printf "%s/%s:%s" $registry .Values.image.repository (include "common.imageTag" .) -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (include "common.imageTag" .) -}}
{{- end -}}
{{- end -}}

{{/* The existing Secret with DATABASE_URL, AMQP_URL, INTERNAL_SECRET and the service's other secrets. */}}
{{- define "common.secretName" -}}
{{- .Values.existingSecret | default (.Values.global).existingSecret | default "seller-api" -}}
{{- end -}}

{{- define "common.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "common.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* Render a value that may hold template expressions. Usage: include "common.tplvalues" (dict "value" .x "context" $) */}}
{{- define "common.tplvalues" -}}
{{- if typeIs "string" .value -}}
{{- tpl .value .context -}}
{{- else -}}
{{- tpl (.value | toYaml) .context -}}
{{- end -}}
{{- end -}}

{{/*
The Service name of another seller-api chart, for the URLs one service calls (gateway -> services,
orders -> payments). Through the umbrella chart (release "seller-api") it is <release>-<peer>. Installed
alone, each chart's release is expected to be named after its service with an optional common prefix
("gateway" and "orders", or "prod-gateway" and "prod-orders"): the peer's name is this release's name
with this service's name replaced by the peer's. Otherwise set the URL in `config`.
Usage: include "common.peerName" (dict "peer" "orders" "context" $)
*/}}
{{- define "common.peerName" -}}
{{- $ctx := .context -}}
{{- if contains $ctx.Chart.Name $ctx.Release.Name -}}
{{- replace $ctx.Chart.Name .peer $ctx.Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" $ctx.Release.Name .peer | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

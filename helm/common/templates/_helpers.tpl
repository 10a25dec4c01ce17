{{/*
Names and labels. Every service chart is named after its service (.Chart.Name), and the pods carry
app.kubernetes.io/name=<service>: the NetworkPolicies of the other charts find the gateway (and orders
finds payments) by that label, whether the charts are installed alone or through the umbrella chart.
*/}}

{{- define "common.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Whether this chart renders as a subchart of the umbrella chart (its templates then live under
<umbrella>/charts/), where the five services share one release.
*/}}
{{- define "common.inUmbrella" -}}
{{- if contains "/charts/" .Template.Name -}}true{{- end -}}
{{- end -}}

{{/*
<release>-<service>, or <service> when a release of the chart alone is named like the service. Through
the umbrella always <release>-<service>, whatever the release is called (a release "orders-stack" would
otherwise name the orders chart's objects "orders-stack" and the others "orders-stack-<service>").
*/}}
{{- define "common.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if and (contains .Chart.Name .Release.Name) (not (include "common.inUmbrella" .)) -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "common.selectorLabels" -}}
app.kubernetes.io/name: {{ include "common.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
The installs that call each other: every release of the umbrella chart is one group; charts installed
alone form a group by the common part of their release names ("prod-gateway" and "prod-orders": "prod";
"gateway" and "orders": empty). A non-empty global.releaseGroup overrides it. The NetworkPolicies accept callers and
reach peers of the same group only, so two installs in one namespace cannot call each other.
*/}}
{{- define "common.releaseGroup" -}}
{{- if (.Values.global).releaseGroup -}}
{{- .Values.global.releaseGroup -}}
{{- else if include "common.inUmbrella" . -}}
{{- .Release.Name -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- replace .Chart.Name "" .Release.Name | trimAll "-" -}}
{{- else -}}
{{- .Release.Name -}}
{{- end -}}
{{- end -}}

{{- define "common.labels" -}}
{{ include "common.selectorLabels" . }}
app.kubernetes.io/part-of: seller-api
seller-api/group: {{ include "common.releaseGroup" . | trunc 63 | trimAll "-" | quote }}
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

{{/*
The existing Secret of this service alone: its own DATABASE_URL (its PostgreSQL role), AMQP_URL (its
RabbitMQ user), its INTERNAL_KEY, its INTERNAL_CALLER_KEYS and its other
secrets (docs/deploy.md, "Secrets"). existingSecret, else <global.secretPrefix>-<service>
("seller-api-orders"). No Secret is shared by two services.
*/}}
{{- define "common.secretName" -}}
{{- .Values.existingSecret | default (printf "%s-%s" ((.Values.global).secretPrefix | default "seller-api") (include "common.name" .)) -}}
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
orders -> payments). Through the umbrella chart it is <release>-<peer>, whatever the release. Installed
alone, each chart's release is expected to be named after its service with an optional common prefix
("gateway" and "orders", or "prod-gateway" and "prod-orders"): the peer's name is this release's name
with this service's name replaced by the peer's. Otherwise set the URL in `config`.
Usage: include "common.peerName" (dict "peer" "orders" "context" $)
*/}}
{{- define "common.peerName" -}}
{{- $ctx := .context -}}
{{- if and (contains $ctx.Chart.Name $ctx.Release.Name) (not (include "common.inUmbrella" $ctx)) -}}
{{- replace $ctx.Chart.Name .peer $ctx.Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" $ctx.Release.Name .peer | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

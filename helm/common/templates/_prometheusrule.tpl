{{/*
Alerts of one service, each selecting that service's samples by their `service` label. Which alerts a
chart has and their thresholds are values (metrics.prometheusRule.alerts); every alert links its runbook
docs/runbooks/<alert>.md under runbookBaseUrl.
*/}}
{{- define "common.prometheusRule" -}}
{{- $pr := .Values.metrics.prometheusRule -}}
{{- if or $pr.enabled ((.Values.global).monitoring).prometheusRule }}
{{- $svc := include "common.name" . -}}
{{- $sel := printf "service=%q" $svc -}}
{{- $a := $pr.alerts -}}
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "common.fullname" . }}
  labels:
    {{- include "common.labels" . | nindent 4 }}
    {{- with $pr.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  groups:
    - name: seller-api-{{ $svc }}
      rules:
        {{- with $a.SellerApiHigh5xxRatio }}{{ if .enabled }}
        - alert: SellerApiHigh5xxRatio
          expr: |
            sum(rate(http_requests_total{ {{- $sel }},status_code=~"5.."}[5m]))
              / sum(rate(http_requests_total{ {{- $sel }}}[5m])) > {{ .threshold }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
          annotations:
            summary: {{ printf "%s answers more than %v%% of its requests with a 5xx" $svc (mulf .threshold 100) | quote }}
            description: "{{ `{{ $value | humanizePercentage }}` }} of the requests end in 5xx over the last 5 minutes."
            runbook_url: {{ printf "%s/SellerApiHigh5xxRatio.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiHighP99Latency }}{{ if .enabled }}
        - alert: SellerApiHighP99Latency
          expr: |
            histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{ {{- $sel }}}[5m]))) > {{ .thresholdSeconds }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
          annotations:
            summary: {{ printf "%s p99 latency above %vs" $svc .thresholdSeconds | quote }}
            description: "p99 over the last 5 minutes is {{ `{{ $value | humanizeDuration }}` }}."
            runbook_url: {{ printf "%s/SellerApiHighP99Latency.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiOutboxLag }}{{ if .enabled }}
        - alert: SellerApiOutboxLag
          expr: |
            max(outbox_oldest_message_age_seconds{ {{- $sel }}}) > {{ .thresholdSeconds }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
          annotations:
            summary: {{ printf "%s has outbox messages older than %vs not yet published" $svc .thresholdSeconds | quote }}
            description: "The oldest unpublished outbox row is {{ `{{ $value | humanizeDuration }}` }} old."
            runbook_url: {{ printf "%s/SellerApiOutboxLag.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiConsumerStopped }}{{ if .enabled }}
        - alert: SellerApiConsumerStopped
          expr: |
            max by (queue) (amqp_consumer_active{ {{- $sel }}}) == 0
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
          annotations:
            summary: {{ printf "No replica of %s consumes a queue" $svc | quote }}
            description: "No replica has consumed {{ `{{ $labels.queue }}` }} for {{ .for }}."
            runbook_url: {{ printf "%s/SellerApiConsumerStopped.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiReadinessFailing }}{{ if .enabled }}
        - alert: SellerApiReadinessFailing
          expr: |
            min by (pod, check) (readiness_check_up{ {{- $sel }}}) == 0
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
          annotations:
            summary: {{ printf "A %s pod fails its readiness check" $svc | quote }}
            description: "Pod {{ `{{ $labels.pod }}` }} cannot reach {{ `{{ $labels.check }}` }}."
            runbook_url: {{ printf "%s/SellerApiReadinessFailing.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiDeadWebhookDeliveries }}{{ if .enabled }}
        - alert: SellerApiDeadWebhookDeliveries
          expr: |
            sum(increase(webhook_delivery_attempts_total{ {{- $sel }},outcome="dead"}[15m])) > {{ .threshold }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
          annotations:
            summary: "Webhook deliveries went dead (every attempt failed)"
            description: "{{ `{{ $value }}` }} deliveries went dead in the last 15 minutes."
            runbook_url: {{ printf "%s/SellerApiDeadWebhookDeliveries.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
{{- end }}
{{- end -}}

{{/* Everything a service chart renders; the gateway adds its Ingresses. */}}
{{- define "common.serviceChart" -}}
{{ include "common.serviceAccount" . }}
---
{{ include "common.configMap" . }}
---
{{ include "common.deployment" . }}
---
{{ include "common.service" . }}
---
{{ include "common.hpa" . }}
---
{{ include "common.pdb" . }}
---
{{ include "common.networkPolicy" . }}
---
{{ include "common.serviceMonitor" . }}
---
{{ include "common.prometheusRule" . }}
---
{{ include "common.migrationsJob" . }}
{{- end -}}

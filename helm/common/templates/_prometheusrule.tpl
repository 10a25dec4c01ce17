{{/*
Alerts of one service, each selecting that service's samples by their `service` label and the release
namespace (grouped by namespace too), so installs in other namespaces are neither mixed in nor
averaged away. Request alerts leave out the probes (/healthz, /readyz: the kit labels them with those
routes), which would dilute the ratios and the latency. The consumer and readiness alerts also fire when
the series vanish (no pod left, or no pod scraped), not only when they say 0. Every alert is labelled
with its `service` whatever its expression keeps. Which alerts a chart has and their thresholds are
values (metrics.prometheusRule.alerts); every alert links its runbook docs/runbooks/<alert>.md under
runbookBaseUrl.
*/}}
{{- define "common.prometheusRule" -}}
{{- $pr := .Values.metrics.prometheusRule -}}
{{- if or $pr.enabled ((.Values.global).monitoring).prometheusRule }}
{{- $svc := include "common.name" . -}}
{{- $sel := printf "service=%q,namespace=%q" $svc .Release.Namespace -}}
{{- $http := printf "%s,route!~%q" $sel "/healthz|/readyz" -}}
{{- /* `up` has only the scrape target's labels: job is the Kubernetes Service name (the ServiceMonitor's default). */ -}}
{{- $up := printf "job=%q,namespace=%q" (include "common.fullname" .) .Release.Namespace -}}
{{- $scraped := or .Values.metrics.serviceMonitor.enabled ((.Values.global).monitoring).serviceMonitor -}}
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
            sum by (namespace) (rate(http_requests_total{ {{- $http }},status_code=~"5.."}[5m]))
              / sum by (namespace) (rate(http_requests_total{ {{- $http }}}[5m])) > {{ .threshold }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: {{ printf "%s answers more than %v%% of its requests with a 5xx" $svc (mulf .threshold 100) | quote }}
            description: "{{ `{{ $value | humanizePercentage }}` }} of the requests end in 5xx over the last 5 minutes."
            runbook_url: {{ printf "%s/SellerApiHigh5xxRatio.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiHighP99Latency }}{{ if .enabled }}
        - alert: SellerApiHighP99Latency
          expr: |
            histogram_quantile(0.99, sum by (namespace, le) (rate(http_request_duration_seconds_bucket{ {{- $http }}}[5m]))) > {{ .thresholdSeconds }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: {{ printf "%s p99 latency above %vs" $svc .thresholdSeconds | quote }}
            description: "p99 over the last 5 minutes is {{ `{{ $value | humanizeDuration }}` }}."
            runbook_url: {{ printf "%s/SellerApiHighP99Latency.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiOutboxLag }}{{ if .enabled }}
        - alert: SellerApiOutboxLag
          expr: |
            max by (namespace) (outbox_oldest_message_age_seconds{ {{- $sel }}}) > {{ .thresholdSeconds }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: {{ printf "%s has outbox messages older than %vs not yet published" $svc .thresholdSeconds | quote }}
            description: "The oldest unpublished outbox row is {{ `{{ $value | humanizeDuration }}` }} old."
            runbook_url: {{ printf "%s/SellerApiOutboxLag.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiConsumerStopped }}{{ if .enabled }}
        - alert: SellerApiConsumerStopped
          expr: |
            max by (namespace, queue) (amqp_consumer_active{ {{- $sel }}}) == 0
              or absent_over_time(amqp_consumer_active{ {{- $sel }}}[5m])
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: {{ printf "No replica of %s consumes a queue" $svc | quote }}
            description: "{{ `{{ with $labels.queue }}No replica has consumed {{ . }}{{ else }}No replica reports its consumers (no pod running or scraped){{ end }}` }} for {{ .for }}."
            runbook_url: {{ printf "%s/SellerApiConsumerStopped.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiReadinessFailing }}{{ if .enabled }}
        - alert: SellerApiReadinessFailing
          expr: |
            min by (namespace, pod, check) (readiness_check_up{ {{- $sel }}}) == 0
            {{- if $scraped }}
              or max by (namespace, pod) (up{ {{- $up }}}) == 0
              or absent_over_time(up{ {{- $up }}}[5m])
            {{- end }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: {{ printf "A %s pod fails its readiness check" $svc | quote }}
            description: "{{ `{{ if $labels.check }}Pod {{ $labels.pod }} cannot reach {{ $labels.check }}{{ else if $labels.pod }}Pod {{ $labels.pod }} cannot be scraped (down or not answering){{ else }}No pod is running or scraped{{ end }}` }}."
            runbook_url: {{ printf "%s/SellerApiReadinessFailing.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiDeadWebhookDeliveries }}{{ if .enabled }}
        - alert: SellerApiDeadWebhookDeliveries
          expr: |
            sum by (namespace) (increase(webhook_delivery_attempts_total{ {{- $sel }},outcome="dead"}[15m])) > {{ .threshold }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: "Webhook deliveries went dead (every attempt failed)"
            description: "{{ `{{ $value }}` }} deliveries went dead in the last 15 minutes."
            runbook_url: {{ printf "%s/SellerApiDeadWebhookDeliveries.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- /* The reconciliation's gauges are read from the database: every replica reports the same. */ -}}
        {{- with $a.SellerApiLedgerReconciliationMismatch }}{{ if .enabled }}
        - alert: SellerApiLedgerReconciliationMismatch
          expr: |
            sum by (namespace) (max by (namespace, kind) (ledger_reconciliation_mismatches{ {{- $sel }}})) > {{ .threshold }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: "The ledger disagrees with payments, or a balance with its journal, and the reconciliation cannot heal it"
            description: "{{ `{{ $value }}` }} mismatches are open after the last reconciliation run."
            runbook_url: {{ printf "%s/SellerApiLedgerReconciliationMismatch.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiRefundHoldsUnresolved }}{{ if .enabled }}
        - alert: SellerApiRefundHoldsUnresolved
          expr: |
            max by (namespace) (refund_holds_unresolved{ {{- $sel }}}) > {{ .threshold }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: "Refunds were asked of the PSP with no known outcome; their money stays held"
            description: "{{ `{{ $value }}` }} refund holds wait for an operator: the PSP was asked and the charge is not refunded."
            runbook_url: {{ printf "%s/SellerApiRefundHoldsUnresolved.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiRefundsUnresolved }}{{ if .enabled }}
        - alert: SellerApiRefundsUnresolved
          expr: |
            max by (namespace) (payments_refunds_unresolved{ {{- $sel }}}) > {{ .threshold }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: "Refunds asked of the PSP have had no end for longer than REFUND_ALERT_AFTER_MS"
            description: "{{ `{{ $value }}` }} refunds are neither made nor refused at the PSP; their money stays held."
            runbook_url: {{ printf "%s/SellerApiRefundsUnresolved.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiInternalCallRefused }}{{ if .enabled }}
        - alert: SellerApiInternalCallRefused
          expr: |
            sum by (namespace, caller) (increase(internal_calls_refused_total{ {{- $sel }}}[5m])) > {{ .threshold }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: {{ printf "%s refused signed calls that its access table does not allow" $svc | quote }}
            description: "{{ `{{ $labels.caller }}` }} made {{ `{{ $value }}` }} calls outside its row over 5 minutes: a stolen key, or a release calling a route its table does not list."
            runbook_url: {{ printf "%s/SellerApiInternalCallRefused.md" $pr.runbookBaseUrl }}
        {{- end }}{{ end }}
        {{- with $a.SellerApiLedgerReconciliationStalled }}{{ if .enabled }}
        - alert: SellerApiLedgerReconciliationStalled
          expr: |
            time() - (
              max by (namespace) (ledger_reconciliation_last_success_timestamp_seconds{ {{- $sel }}} > 0)
                or min by (namespace) (process_start_time_seconds{ {{- $sel }}})
            ) > {{ .thresholdSeconds }}
          for: {{ .for }}
          labels:
            severity: {{ .severity }}
            service: {{ $svc }}
          annotations:
            summary: {{ printf "No ledger reconciliation run has finished for more than %vs" .thresholdSeconds | quote }}
            description: "The last reconciliation run finished {{ `{{ $value | humanizeDuration }}` }} ago, or none has finished since the oldest replica started (runs fail, or none runs)."
            runbook_url: {{ printf "%s/SellerApiLedgerReconciliationStalled.md" $pr.runbookBaseUrl }}
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

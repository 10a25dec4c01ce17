{{/*
One NetworkPolicy per service, over the server pods and the migrations Job (both carry the name and
instance labels). Ingress: the service port only from the callers the code has (the gateway, orders for
payments) of the same release group (common.releaseGroup) plus `ingressFrom`; the metrics port only
from `metricsFrom`. Egress: DNS, PostgreSQL, RabbitMQ, the peers the service calls (same group), Redis
and the internet where the chart turns them on. `allowUngroupedPeers` also admits callers and peers
without the group label (pods of chart versions before it), for the upgrade that introduces it.
*/}}
{{- define "common.networkPolicy" -}}
{{- $np := .Values.networkPolicy -}}
{{- $group := include "common.releaseGroup" . | trunc 63 | trimAll "-" -}}
{{- if $np.enabled }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "common.fullname" . }}
  labels:
    {{- include "common.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "common.selectorLabels" . | nindent 6 }}
  policyTypes:
    - Ingress
    - Egress
  ingress:
    {{- if or $np.callers $np.ingressFrom }}
    - ports:
        - port: http
          protocol: TCP
      from:
        {{- range $np.callers }}
        - podSelector:
            matchLabels:
              app.kubernetes.io/name: {{ . }}
              app.kubernetes.io/part-of: seller-api
              seller-api/group: {{ $group | quote }}
        {{- if $np.allowUngroupedPeers }}
        - podSelector:
            matchLabels:
              app.kubernetes.io/name: {{ . }}
              app.kubernetes.io/part-of: seller-api
            matchExpressions:
              - { key: seller-api/group, operator: DoesNotExist }
        {{- end }}
        {{- end }}
        {{- with $np.ingressFrom }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    {{- end }}
    - ports:
        - port: metrics
          protocol: TCP
      {{- with $np.metricsFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
  egress:
    - ports:
        - port: 53
          protocol: UDP
        - port: 53
          protocol: TCP
      to:
        - namespaceSelector: {}
          podSelector:
            matchLabels:
              {{- toYaml $np.dns.podLabels | nindent 14 }}
    {{- range $name := list "postgres" "rabbitmq" "redis" }}
    {{- $dep := index $np $name }}
    {{- if $dep.enabled }}
    - ports:
        - port: {{ $dep.port }}
          protocol: TCP
      {{- with $dep.to }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
    {{- end }}
    {{- range $np.peers }}
    - ports:
        - port: {{ .port }}
          protocol: TCP
      to:
        - podSelector:
            matchLabels:
              app.kubernetes.io/name: {{ .service }}
              app.kubernetes.io/part-of: seller-api
              seller-api/group: {{ $group | quote }}
        {{- if $np.allowUngroupedPeers }}
        - podSelector:
            matchLabels:
              app.kubernetes.io/name: {{ .service }}
              app.kubernetes.io/part-of: seller-api
            matchExpressions:
              - { key: seller-api/group, operator: DoesNotExist }
        {{- end }}
    {{- end }}
    {{- if $np.internet.enabled }}
    - to:
        - ipBlock:
            cidr: 0.0.0.0/0
            {{- with $np.internet.except }}
            except:
              {{- toYaml . | nindent 14 }}
            {{- end }}
      {{- with $np.internet.ports }}
      ports:
        {{- range . }}
        - port: {{ . }}
          protocol: TCP
        {{- end }}
      {{- end }}
    {{- end }}
    {{- with $np.extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}
{{- end -}}

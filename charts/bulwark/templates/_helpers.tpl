{{/* Labels as hack/manifests/common.ts sets them; Helm's own only on top-level metadata. */}}
{{- define "bulwark.selectorLabels" -}}
app.kubernetes.io/name: bulwark-{{ . }}
app.kubernetes.io/part-of: bulwark
{{- end }}

{{/* The pod template's labels (no chart version: an upgrade must not change them needlessly). */}}
{{- define "bulwark.podLabels" -}}
{{ include "bulwark.selectorLabels" . }}
app.kubernetes.io/component: {{ . }}
{{- end }}

{{/* Top-level metadata labels; call with (dict "root" $ "component" "gateway"). */}}
{{- define "bulwark.labels" -}}
{{- if .component -}}
{{ include "bulwark.podLabels" .component }}
{{- else -}}
app.kubernetes.io/part-of: bulwark
{{- end }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ .root.Chart.Name }}-{{ .root.Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "bulwark.scrape" -}}
{{- if .root.Values.metrics.scrape }}
annotations:
  prometheus.io/scrape: "true"
  prometheus.io/port: {{ .port | quote }}
  prometheus.io/path: /metrics
  {{- if .https }}
  prometheus.io/scheme: https
  {{- end }}
{{- end }}
{{- end }}

{{- define "bulwark.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "bulwark.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop:
    - ALL
{{- end }}

{{/* An HTTP probe; call with (list PATH PORT PERIOD FAILURES SCHEME). */}}
{{- define "bulwark.probe" -}}
httpGet:
  path: {{ index . 0 }}
  port: {{ index . 1 }}
  scheme: {{ index . 4 }}
periodSeconds: {{ index . 2 }}
timeoutSeconds: 2
failureThreshold: {{ index . 3 }}
{{- end }}

{{- define "bulwark.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end }}

{{- define "bulwark.permissionServerUrl" -}}
{{ ternary "https" "http" .Values.permissionServer.tls.enabled }}://bulwark-permission-server.{{ .Release.Namespace }}.svc:{{ .Values.permissionServer.port }}
{{- end }}

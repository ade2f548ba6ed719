{{/*
Names and labels as packaging/manifests/common.ts makes them (test/integration/packaging/helm.test.ts
compares the two object by object). Helm's own labels go only on top-level metadata.
*/}}

{{/*
The prefix of every name the chart gives (values.ts, fullname): fullnameOverride, else the release
name when it contains "bulwark" (release bulwark: bulwark-gateway, as before prefixes), else
<release>-bulwark. At most 40 characters: <prefix>-gateway names a StatefulSet, whose pods' revision
label must stay within 63.
*/}}
{{- define "bulwark.fullname" -}}
{{- $name := .Values.fullnameOverride | default (ternary .Release.Name (printf "%s-bulwark" .Release.Name) (contains "bulwark" .Release.Name)) -}}
{{- if gt (len $name) 40 -}}
{{- fail (printf "fullnameOverride: the names' prefix %s (from the release name) is longer than 40 characters; set a shorter fullnameOverride" $name) -}}
{{- end -}}
{{- $name -}}
{{- end }}

{{/* A workload's selector; (dict "root" $ "component" "gateway"). Never the release's or the user's labels. */}}
{{- define "bulwark.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-%s" (include "bulwark.fullname" .root) .component | quote }}
app.kubernetes.io/part-of: bulwark
{{- end }}

{{/* The gateway's volumeClaimTemplates' labels: immutable in a StatefulSet, so the same on every upgrade. */}}
{{- define "bulwark.claimLabels" -}}
{{ include "bulwark.selectorLabels" . }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The labels the chart sets itself (common.ts ownLabels); (dict "root" $ ["component" C]). */}}
{{- define "bulwark.ownLabels" -}}
{{- if .component -}}
{{ include "bulwark.claimLabels" . }}
{{- else -}}
app.kubernetes.io/part-of: bulwark
{{- end }}
app.kubernetes.io/instance: {{ .root.Release.Name | quote }}
{{- end }}

{{/*
Top-level metadata labels: the chart's own and Helm's over "extra" (a workload's labels) over
commonLabels; (dict "root" $ ["component" C] ["extra" MAP]).
*/}}
{{- define "bulwark.labels" -}}
{{- $own := fromYaml (include "bulwark.ownLabels" .) -}}
{{- $_ := set $own "app.kubernetes.io/managed-by" .root.Release.Service -}}
{{- $_ := set $own "helm.sh/chart" (printf "%s-%s" .root.Chart.Name (.root.Chart.Version | replace "+" "_")) -}}
{{- toYaml (merge $own (.extra | default dict) (.root.Values.commonLabels | default dict)) -}}
{{- end }}

{{/* A pod template's labels: the chart's own over podLabels ("extra") over commonLabels. */}}
{{- define "bulwark.podLabels" -}}
{{- $own := fromYaml (include "bulwark.ownLabels" .) -}}
{{- toYaml (merge $own (.extra | default dict) (.root.Values.commonLabels | default dict)) -}}
{{- end }}

{{/* `annotations:` on a new line, when there are any; (dict "map" MAP "indent" N). */}}
{{- define "bulwark.annotations" -}}
{{- with .map }}
{{ printf "annotations:\n%s" (toYaml . | indent 2) | indent $.indent }}
{{- end }}
{{- end }}

{{/*
A pod template's annotations: Prometheus' scrape annotations (when on) over podAnnotations
("extra"); (dict "root" $ "port" PORT "extra" MAP "indent" N).
*/}}
{{- define "bulwark.podAnnotations" -}}
{{- $scrape := dict -}}
{{- if .root.Values.metrics.scrape -}}
{{- $scrape = dict "prometheus.io/scrape" "true" "prometheus.io/port" (toString .port) "prometheus.io/path" "/metrics" -}}
{{- end -}}
{{- include "bulwark.annotations" (dict "map" (merge $scrape (.extra | default dict)) "indent" .indent) -}}
{{- end }}

{{/*
A pod spec's scheduling from a workload's values (common.ts podPlacement): empty values set
nothing; "builtIn" holds what an empty affinity or topologySpreadConstraints means for this
workload. (dict "root" $ "p" WORKLOAD_VALUES ["builtIn" (dict "affinity" A "topologySpreadConstraints" T)]).
*/}}
{{- define "bulwark.podPlacement" -}}
{{- $builtIn := .builtIn | default dict -}}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .p.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .p.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .p.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .p.affinity | default $builtIn.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .p.topologySpreadConstraints | default $builtIn.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
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


{{/* What the Pepr module must be told (BULWARK_PERMISSION_SERVER); NOTES.txt prints it. */}}
{{- define "bulwark.permissionServerUrl" -}}
{{ ternary "https" "http" .Values.permissionServer.tls.enabled }}://{{ include "bulwark.fullname" . }}-permission-server.{{ .Release.Namespace }}.svc:{{ .Values.permissionServer.port }}
{{- end }}

{{/* The Secrets the chart never writes (common.ts): the values' name, else <prefix>-...; `bulwark install secrets` makes them. */}}
{{- define "bulwark.permissionTlsSecret" -}}
{{ .Values.permissionServer.tls.secretName | default (printf "%s-permission-server-tls" (include "bulwark.fullname" .)) }}
{{- end }}

{{- define "bulwark.edgeHmacSecret" -}}
{{ .Values.edgeHealth.hmacSecret.name | default (printf "%s-edge-health-hmac" (include "bulwark.fullname" .)) }}
{{- end }}

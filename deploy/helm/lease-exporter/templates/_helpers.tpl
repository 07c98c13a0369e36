{{/* Chart name, overridable. */}}
{{- define "lease-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name. A release name that already contains the chart name
is used as is, so `helm install lease-exporter ...` gives plain "lease-exporter".
*/}}
{{- define "lease-exporter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "lease-exporter.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels: stable for the life of a release. */}}
{{- define "lease-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lease-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Common labels. */}}
{{- define "lease-exporter.labels" -}}
helm.sh/chart: {{ include "lease-exporter.chart" . }}
{{ include "lease-exporter.selectorLabels" . }}
app.kubernetes.io/component: exporter
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "lease-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "lease-exporter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "lease-exporter.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default (printf "v%s" .Chart.AppVersion) .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The container port; fixed, the Service port is configurable. */}}
{{- define "lease-exporter.containerPort" -}}10047{{- end }}

{{/* Where the web config Secret is mounted. */}}
{{- define "lease-exporter.webConfigDir" -}}/etc/lease-exporter/web{{- end }}

{{/* The list+watch on Leases that is all the exporter needs, and on the lock kinds enabled in values.locks (_lockkinds.tpl). */}}
{{- define "lease-exporter.rbacRules" -}}
- apiGroups:
    - coordination.k8s.io
  resources:
    - leases
    - leasecandidates
  verbs:
    - list
    - watch
{{- range include "lease-exporter.lockKinds" $ | fromYamlArray }}
{{- if index $.Values.locks .value }}
- apiGroups:
    - {{ .apiGroup | quote }}
  resources:
    - {{ .resource }}
  verbs:
    {{- toYaml .verbs | nindent 4 }}
{{- end }}
{{- end }}
{{- if .Values.events.enabled }}
- apiGroups:
    - events.k8s.io
  resources:
    - events
  verbs:
    - create
    - patch
    - list
{{- end }}
{{- end }}

{{/*
One probe. Args: dict root, path, settings. HTTP(S) GET of path, or a TCP check
when basic auth is on and no Authorization header is supplied (values.yaml,
webConfig.basicAuth).
*/}}
{{- define "lease-exporter.probe" -}}
{{- $v := .root.Values }}
{{- if and $v.webConfig.secretName $v.webConfig.basicAuth (not $v.probes.httpHeaders) }}
tcpSocket:
  port: http-metrics
{{- else }}
httpGet:
  path: {{ .path }}
  port: http-metrics
  scheme: {{ if and $v.webConfig.secretName $v.webConfig.tls }}HTTPS{{ else }}HTTP{{ end }}
  {{- with $v.probes.httpHeaders }}
  httpHeaders:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{ toYaml .settings }}
{{- end }}

{{/* Values checks that the schema cannot express. */}}
{{- define "lease-exporter.validate" -}}
{{- if and .Values.watch.namespaces .Values.watch.namespacesExclude }}
{{- fail "watch.namespaces and watch.namespacesExclude are mutually exclusive" }}
{{- end }}
{{- if and (or .Values.webConfig.tls .Values.webConfig.basicAuth) (not .Values.webConfig.secretName) }}
{{- fail "webConfig.tls and webConfig.basicAuth describe the web config in webConfig.secretName: set webConfig.secretName" }}
{{- end }}
{{- end }}

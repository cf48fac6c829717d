{{/*
Labels every object of the chart carries besides its own: Helm's standard labels. Selectors never use them, so the
chart's Deployment selects the same pods as config/default's.
*/}}
{{- define "alm.labels" -}}
app.kubernetes.io/name: alm
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* The labels that select ALM's pods (config/manager). */}}
{{- define "alm.selectorLabels" -}}
app.kubernetes.io/name: alm
app.kubernetes.io/component: manager
{{- end }}

{{/*
alm.manifests renders the YAML documents of the chart's files matching .glob (copied from config/ by `make chart`):
"alm-system" becomes the release namespace when .namespaced (RBAC subjects, the admission policy's ServiceAccount),
the chart's labels are added, and .annotations are merged into each object's; the file .exclude is left out.
*/}}
{{- define "alm.manifests" -}}
{{- $root := .root }}
{{- range $path, $_ := $root.Files.Glob .glob }}
{{- if ne $path ($.exclude | default "") }}
{{- $text := $root.Files.Get $path }}
{{- if $.namespaced }}
{{- $text = $text | replace "alm-system" $root.Release.Namespace }}
{{- end }}
{{- range $doc := regexSplit "(?m)^---[ \t]*$" $text -1 }}
{{- $obj := fromYaml $doc }}
{{- if $obj.kind }}
{{- $meta := $obj.metadata }}
{{- $_ := set $meta "labels" (merge ($meta.labels | default dict) (include "alm.labels" $root | fromYaml)) }}
{{- if $.annotations }}
{{- $_ := set $meta "annotations" (merge ($meta.annotations | default dict) (deepCopy $.annotations)) }}
{{- end }}
---
{{ toYaml $obj }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

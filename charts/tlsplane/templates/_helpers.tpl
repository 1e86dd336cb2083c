{{/*
Labels of every object: the app and the release. deploy/ carries the same
ones (release tlsplane), so the chart and deploy/ stay one set of objects.
*/}}
{{- define "tlsplane.labels" -}}
app.kubernetes.io/name: tlsplane
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The Pods of this release, and no other release's. */}}
{{- define "tlsplane.selectorLabels" -}}
{{ include "tlsplane.labels" . }}
{{- end }}

{{/* The Lease holder writes status; without a Lease only one replica may run. */}}
{{- define "tlsplane.validate" -}}
{{- if and (not .Values.leaderElection.enabled) (gt (int .Values.replicas) 1) }}
{{- fail (printf "leaderElection.enabled=false needs replicas: 1 (got %d): every replica would write status" (int .Values.replicas)) }}
{{- end }}
{{- end }}

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
{{- if and .Values.provisioner.enabled (not .Values.provisioner.namespaces) }}
{{- fail "provisioner.enabled needs provisioner.namespaces: the namespaces where Gateways get their Envoy, each granted by a Role of its own" }}
{{- end }}
{{- if .Values.namespaces }}
{{- range .Values.provisioner.namespaces }}
{{- if not (has . $.Values.namespaces) }}
{{- fail (printf "provisioner.namespaces: %s is not one of namespaces: its Gateways are not seen" .) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and (not .Values.leaderElection.enabled) (gt (int .Values.replicas) 1) }}
{{- fail (printf "leaderElection.enabled=false needs replicas: 1 (got %d): every replica would write status" (int .Values.replicas)) }}
{{- end }}
{{- end }}

{{/*
What tlsplane reads and writes of the namespaced kinds: the informers list
and watch (informers/view.go); the status writer updates the status of what
the translator reports on and gets the live object after a conflict
(statuswriter/). Granted by a Role in each of namespaces, else cluster-wide.
*/}}
{{- define "tlsplane.namespacedRules" -}}
- apiGroups: [""]
  resources: [services, configmaps, secrets]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
- apiGroups: [gateway.networking.k8s.io]
  resources: [referencegrants]
  verbs: [list, watch]
- apiGroups: [gateway.networking.k8s.io]
  resources: [backendtlspolicies, gateways, listenersets, httproutes, grpcroutes, tlsroutes, tcproutes, udproutes]
  verbs: [get, list, watch]
- apiGroups: [gateway.networking.k8s.io]
  resources: [backendtlspolicies/status, gateways/status, listenersets/status, httproutes/status, grpcroutes/status, tlsroutes/status, tcproutes/status, udproutes/status]
  verbs: [update]
# The experimental external backends (GEP-4894); read only when their
# CRDs are installed.
- apiGroups: [gateway.networking.x-k8s.io]
  resources: [xbackends, xbackendtrafficpolicies]
  verbs: [get, list, watch]
- apiGroups: [gateway.networking.x-k8s.io]
  resources: [xbackends/status, xbackendtrafficpolicies/status]
  verbs: [update]
{{- end }}

{{/*
The Gateway provisioner (provisioner/), granted by a Role in each of
provisioner.namespaces only: server-side apply (patch; create when the
object is new) of each Gateway's ServiceAccount, bootstrap ConfigMap,
Deployment and Service, a get when its cache misses one, a list and watch
of those it labelled, and delete when a Gateway leaves our classes.
*/}}
{{- define "tlsplane.provisionerRules" -}}
- apiGroups: [""]
  resources: [serviceaccounts, configmaps, services]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, patch, delete]
{{- end }}

{{/*
The cluster-scoped kinds, read whatever namespaces says: Namespaces, whose
labels Gateway listeners' allowedRoutes selectors match, GatewayClasses and
XMeshes and their status.
*/}}
{{- define "tlsplane.clusterRules" -}}
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses]
  verbs: [get, list, watch]
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses/status]
  verbs: [update]
# The experimental, cluster-scoped XMesh (GEP-3949); read only when its
# CRD is installed.
- apiGroups: [gateway.networking.x-k8s.io]
  resources: [xmeshes]
  verbs: [get, list, watch]
- apiGroups: [gateway.networking.x-k8s.io]
  resources: [xmeshes/status]
  verbs: [update]
{{- end }}

{{/* The mesh injection's objects and Pods: apart from tlsplane serve's, so
its Service, PodDisruptionBudget and anti-affinity select none of them. */}}
{{- define "tlsplane.meshInjectionLabels" -}}
app.kubernetes.io/name: tlsplane-mesh-injection
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

// Package translator turns Gateway API objects (GatewayClasses, Gateways,
// ListenerSets, HTTP, GRPC, TLS, TCP and UDP routes, ReferenceGrants),
// BackendTLSPolicies, XBackends and XMeshes, with the Services, EndpointSlices, ConfigMaps,
// Secrets and Namespaces they refer to, into Envoy resources per fleet,
// plus the status of every object it owns.
//
// This package keeps the public API (Translate, Translator, Update, the
// Inputs and Output types) and the engine that runs the passes; the rules
// and the protos live below it, in layers whose imports point one way
// (TestLayers checks them): leaves (input, condition, tlsopts, capem,
// referencegrant, memo), the plan, the judging packages (backendtls,
// gateway, gatewaytls, mesh, route, upstream, xbackend, xmesh), which decide plans, the emitter (envoy), which turns plans into
// validated protos, and what works on emitted output (fleet, outputpatch,
// dataplane). The engine judges, emits, feeds what Envoy would refuse back
// into the verdicts, and only then writes statuses.
//
// It must stay pure: no I/O, no goroutines, no clock but the `now` passed
// in, no globals that change, and deterministic, sorted output.
//
// # Reading the engine
//
// Each file is one step of a pass and uses only the files listed after it
// (TestFilesReadDownward keeps it so, as TestLayers keeps the packages):
//
//   - update.go: Update, one incremental pass, which runs the four files
//     below it in reverse: take the changes (changes.go), re-judge what
//     they reach (rejudge.go), patch the route configurations
//     (routepatch.go), then patch the last Output (update_output.go).
//   - update_output.go, routepatch.go, rejudge.go, changes.go: those steps;
//     rejudge_xbackends.go judges and emits every XBackend, for both
//     passes (they are few: a change reaching one redoes them all);
//     xmeshes.go puts the XMeshes' statuses (package xmesh) into an
//     Update's Output, judged whole every time.
//   - whole.go: Translate, the whole pass: judge every policy, translate
//     every Service port, run the Gateway rules, write the statuses.
//   - crlwants.go: the distribution points verdicts want fetched
//     (Output.CRLDistributionPoints), and the policies each one reaches.
//   - translator.go: the Translator: its memory and its state.
//   - state.go, gateway_objects.go: the state Update starts from.
//   - memory.go: the steps a Translator reuses across calls.
//   - emit_gateways.go, emit_mesh.go, ports.go, emit_xbackends.go,
//     emit_policy.go: emitting a run of the Gateway rules, the mesh's
//     fleets (package mesh; docs/mesh.md), a Service port's cluster, an
//     XBackend's clusters and secrets, a policy's TLS.
//   - traffic.go: the XBackendTrafficPolicies judged (package
//     trafficpolicy): the retry budgets of Service ports' and XBackends'
//     HTTP clusters, the sessions of route tables, the policies' statuses.
//   - dataplane.go, api.go, aliases.go: the public types and names
//     (api.go's RouteStatusesOf finds a route kind's computed statuses
//     through its description).
//
// # Words
//
//   - verdict: a BackendTLSPolicy judged (backendtls.Verdict).
//   - governor: a verdict with what the emitter made of it (the packed TLS
//     and SDS secrets every port it governs shares, by pointer); a port's
//     governor is the policy that won its attachment.
//   - port output: what one Service port contributed: its cluster, load
//     assignment, secrets, warnings, or why it gets no cluster.
//   - memory: what a Translator reuses across calls while the objects it
//     came from stay the same (verdicts, ports, statuses, parsed CAs).
//   - world: the state of the last translation Update patches: the objects
//     by key, what refers to what, each policy's attachments, each
//     Service's port outputs and the counts behind the Output's shared
//     parts. A whole translation leaves its parts (wholeTranslation); the
//     first Update builds the world from them.
//   - update: what one Update found its changes to reach.
//   - XBackend output: every XBackend judged (xbackend.Verdict) and
//     emitted, its clusters and secrets beside the Service ports'; the
//     verdicts are recorded in the index (input.XBackend), where routes
//     read them.
//   - reach: the Service ports a Gateway's routes send traffic to.
//   - own clusters: a Gateway fleet's versions of the clusters it reaches,
//     presenting its Gateway's backend client certificate (package fleet).
package translator

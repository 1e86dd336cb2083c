package translator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/xmesh"
)

// The XMeshes (package xmesh judges): statuses only, judged whole on
// every Update (they are few, usually one, and nothing else reads them).

// restatusXMeshes puts the world's XMeshes' statuses into out and the
// world's last Output.
func (t *Translator) restatusXMeshes(out *Output, stamp metav1.Time) {
	w := t.world
	st := xmesh.Statuses(input.ValuesOf(w.xmeshes), t.gatewayConfig.ControllerName, stamp)
	out.GatewayAPI.XMeshes = st
	w.out.GatewayAPI.XMeshes = st
}

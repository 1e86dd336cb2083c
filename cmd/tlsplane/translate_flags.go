package main

import (
	"flag"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/mesh"
	"github.com/tlsplane/tlsplane/translator/xbackend"
)

// translationFlags are the flags translate and validate share: how the
// manifests are read and how they are translated, as serve would.
type translationFlags struct {
	controller        *string
	systemCA          *string
	allowInsecure     *bool
	listenerAddress   string
	xbackendHostnames *xbackend.Hostnames
	meshNamespaces    *mesh.Selector
	channel           translator.Channel
	limits            *manifests.Limits
}

var translationFlagNames = []string{"controller-name", "gateway-api-channel", "listener-address", "system-ca-bundle", "allow-insecure-skip-verify", "xbackend-hostnames", "mesh-namespaces"}

func registerTranslationFlags(fs *flag.FlagSet) *translationFlags {
	f := &translationFlags{
		controller:    fs.String("controller-name", string(translator.DefaultControllerName), "controllerName written into status"),
		systemCA:      fs.String("system-ca-bundle", translator.DefaultSystemCABundlePath, "CA bundle file, on the Envoy host, for wellKnownCACertificates: System"),
		allowInsecure: fs.Bool("allow-insecure-skip-verify", false, "honour the tlsplane.io/insecureSkipVerify option"),
	}
	registerListenerAddress(fs, &f.listenerAddress)
	registerXBackendHostnames(fs, &f.xbackendHostnames)
	registerMeshNamespaces(fs, &f.meshNamespaces)
	registerGatewayAPIChannel(fs, &f.channel)
	f.limits = registerDirLimits(fs)
	return f
}

// readLimits are the manifest limits, admitting against the CRDs of the
// cluster's channel, as serve does.
func (f *translationFlags) readLimits() manifests.Limits {
	l := *f.limits
	l.CRDChannel = string(f.channel)
	return l
}

func (f *translationFlags) controllerName() gwv1.GatewayController {
	return gwv1.GatewayController(*f.controller)
}

func (f *translationFlags) options() translator.Options {
	return translator.Options{
		ControllerName:          f.controllerName(),
		SystemCABundlePath:      *f.systemCA,
		AllowInsecureSkipVerify: *f.allowInsecure,
		ListenerAddress:         f.listenerAddress,
		XBackendHostnames:       f.xbackendHostnames,
		MeshNamespaces:          f.meshNamespaces,
		GatewayAPIChannel:       f.channel,
	}
}

// translateAsServed translates in as serve would, warnings to warn, and
// runs the publisher's checks: a fleet they refuse is on its Gateway's
// status, and among the refusals returned.
func translateAsServed(in translator.Inputs, f *translationFlags, now time.Time, warn func(string)) (translator.Output, []translator.FleetRefusal, error) {
	out := translator.Translate(in, nil, now, f.options())
	for _, w := range out.Warnings {
		warn(w)
	}
	pub := snapshots.New(snapshots.Options{})
	if _, err := pub.Publish(out); err != nil {
		return translator.Output{}, nil, fmt.Errorf("the translation cannot be served: %w", err)
	}
	out.GatewayAPI = translator.RefuseGateways(out.GatewayAPI, pub.Refusals(), metav1.NewTime(now.UTC().Truncate(time.Second)))
	return out, pub.Refusals(), nil
}

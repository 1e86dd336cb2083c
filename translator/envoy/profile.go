package envoy

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// profileMetadata is the cluster metadata naming a policy's crypto profile
// (filter_metadata["tlsplane.io"].profile): a check that sees only the
// cluster, such as the fleet's Envoy build check, knows what was asked for.
func profileMetadata(profile string) *corev3.Metadata {
	return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{
		tlsopts.ClusterMetadataNamespace: {Fields: map[string]*structpb.Value{
			tlsopts.ClusterMetadataProfile: structpb.NewStringValue(profile),
		}},
	}}
}

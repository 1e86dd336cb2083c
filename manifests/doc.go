// Package manifests reads Kubernetes manifests (multi-document YAML or JSON
// files, or directories of them) into translator.Inputs. It keeps the kinds
// the translator reads and skips others with a warning. Gateway API
// objects are admitted against the pinned CRDs (package crds) before they
// are read, as the API server admits a create: a file with an object the
// API server would refuse is refused, every such object named
// (RefusedError), and the objects read are the defaulted ones.
//
// It owns file and YAML handling only: no BackendTLSPolicy rule lives here,
// and it never talks to the Kubernetes API.
package manifests

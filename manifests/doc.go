// Package manifests reads Kubernetes manifests (multi-document YAML or JSON
// files, or directories of them) into translator.Inputs. It keeps the kinds
// the translator reads and skips others with a warning.
//
// It owns file and YAML handling only: no BackendTLSPolicy rule lives here,
// and it never talks to the Kubernetes API.
package manifests

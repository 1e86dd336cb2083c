#!/usr/bin/env bash
# Copies the Gateway API CRDs of the sigs.k8s.io/gateway-api version go.mod
# names into crds/, where package crds embeds them. Run it after bumping the
# module; TestEmbeddedCRDsMatchModule fails until you do.
set -euo pipefail
cd "$(dirname "$0")/.."
src="$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)/config/crd"
for channel in standard experimental; do
	rm -rf "crds/${channel}"
	mkdir -p "crds/${channel}"
	for f in "${src}/${channel}"/*.yaml; do
		case "$(basename "$f")" in
		# Not CRDs: kustomize's list, and a ValidatingAdmissionPolicy on
		# installing CRDs (it admits CRDs, never Gateway API objects).
		kustomization.yaml | *_vap_safeupgrades.yaml) continue ;;
		esac
		install -m 0644 "$f" "crds/${channel}/"
	done
done
echo "crds/: copied from ${src}"

#!/bin/sh
# DEMO ONLY. Generates the self-signed certificate the example Gateway
# shop/edge serves on its HTTPS listener (SAN *.shop.example and
# shop.example), and writes it with its private key into the Secret
# ../edge-certificate.yaml. The key is committed on purpose so the example
# works from a clean clone: never trust this certificate anywhere else.
# Valid for 10 years. Re-run from any directory.
set -eu
cd "$(dirname "$0")"

openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout edge.key -out edge.crt -days 3650 \
  -subj "/O=tlsplane demo/CN=*.shop.example (DO NOT TRUST)" \
  -addext "basicConstraints=critical,CA:FALSE" \
  -addext "keyUsage=critical,digitalSignature" \
  -addext "extendedKeyUsage=serverAuth" \
  -addext "subjectAltName=DNS:*.shop.example,DNS:shop.example"
chmod 0644 edge.key

indent() { sed 's/^/    /' "$1"; }
{
  echo "# DEMO ONLY: written by certs/generate.sh. The certificate and private key"
  echo "# the Gateway shop/edge serves on its HTTPS listener; Envoy receives them over"
  echo "# SDS as the secret Certificate/shop/edge-certificate, and only the fleet"
  echo "# shop/edge does. Never trust this certificate anywhere else."
  echo "apiVersion: v1"
  echo "kind: Secret"
  echo "metadata:"
  echo "  namespace: shop"
  echo "  name: edge-certificate"
  echo "type: kubernetes.io/tls"
  echo "stringData:"
  echo "  tls.crt: |"
  indent edge.crt
  echo "  tls.key: |"
  indent edge.key
} > ../edge-certificate.yaml
echo "wrote $(pwd)/edge.crt, edge.key and ../edge-certificate.yaml (demo only)"

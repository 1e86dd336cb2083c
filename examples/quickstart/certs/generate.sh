#!/bin/sh
# DEMO ONLY. Generates the quickstart's throw-away CA and the certificate of
# the payments backend (SAN payments.shop.example, and 127.0.0.1 for curl).
# The private keys are committed on purpose so `make run` works from a clean
# clone: never trust this CA anywhere else. Valid for 10 years.
# Re-run from any directory; then paste ca.crt into ../ca-configmap.yaml.
set -eu
cd "$(dirname "$0")"
days=3650

openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout ca.key -out ca.crt -days "$days" \
  -subj "/O=tlsplane demo/CN=tlsplane quickstart demo CA (DO NOT TRUST)" \
  -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign"

openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout payments.key -out payments.csr \
  -subj "/O=tlsplane demo/CN=payments.shop.example"
cat > payments.ext <<'EXT'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:payments.shop.example,IP:127.0.0.1
EXT
openssl x509 -req -in payments.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
  -out payments.crt -days "$days" -extfile payments.ext
rm -f payments.csr payments.ext ca.srl
chmod 0644 ca.key payments.key
echo "wrote $(pwd)/ca.crt, ca.key, payments.crt, payments.key (demo only)"

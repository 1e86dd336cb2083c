# tlsplane image: a static binary on scratch, running as a non-root user.
#   docker build --build-arg VERSION=$(git describe --always --dirty) -t tlsplane .
# Without VERSION the binary reports what the Go build info knows ("dev" in
# a context without .git). `make image` (part of `make test`) builds the
# tlsplane stage with buildah, the `build` stage replaced by a build context
# holding the Makefile's static binary, and checks the result: keep
# ENTRYPOINT, USER and EXPOSE in step with hack/image.sh.
# The `backend` stage is the examples/backend echo server, used by
# e2e/docker-compose.yaml: docker build --target backend -t tlsplane-backend .
FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so a source edit does not re-download them.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.stampedVersion=${VERSION}" -o /out/tlsplane ./cmd/tlsplane \
 && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/backend ./examples/backend

FROM scratch AS backend
COPY --from=build /out/backend /backend
USER 65532:65532
ENTRYPOINT ["/backend"]

# Last stage: what `docker build .` produces. The default command serves
# /config on loopback, for an Envoy sharing the container's network (as in
# e2e/docker-compose.yaml); to serve the network, pass arguments such as
#   serve --xds-address 0.0.0.0:18000 --xds-tls-cert ... --xds-tls-key ... --xds-client-ca ...
# (plaintext xDS off loopback needs --insecure-xds).
FROM scratch AS tlsplane
COPY --from=build /out/tlsplane /tlsplane
USER 65532:65532
EXPOSE 18000 19000
ENTRYPOINT ["/tlsplane"]
CMD ["serve", "--dir", "/config"]

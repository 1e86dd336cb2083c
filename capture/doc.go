// Package capture programs a Pod's network namespace so its outbound TCP
// reaches the mesh sidecar (docs/mesh.md): in an nftables table of its
// own, the nat output hook redirects TCP from any UID but the sidecar's,
// and not to loopback, to the sidecar's capture listener, which reads the
// original destination back. It talks netlink to the kernel directly
// (github.com/google/nftables), so the init image needs no nft binary.
// It owns only its table: Remove deletes that table and nothing else.
package capture

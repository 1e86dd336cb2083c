// Package peers shares, through the API server, what the Envoys connected
// to each replica report, so that every replica (and so the leader, which
// writes tlsplane.io/HandshakesSucceeding and
// tlsplane.io/BackendCertificatesValid) counts the whole fleet.
//
// Each replica publishes, per topic (its handshake windows; its backend
// certificate inventory), a ConfigMap of its own in the leader election
// namespace, and hands the others' to its tracker or inventory. It owns
// those ConfigMaps and nothing else: no protocol between replicas, no
// write to any other object. A replica that dies leaves its ConfigMaps;
// what they hold ages out (the handshake window, the inventory's
// retention), then a peer deletes the object.
package peers

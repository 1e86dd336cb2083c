// Package peers shares, through the API server, what the Envoys connected
// to each replica report, so that every replica (and so the leader, which
// writes tlsplane.io/HandshakesSucceeding) counts the whole fleet.
//
// Each replica publishes its handshake windows in a ConfigMap of its own
// in the leader election namespace, and hands the others' to its tracker.
// It owns those ConfigMaps and nothing else: no protocol between replicas,
// no write to any other object. A replica that dies leaves its ConfigMap;
// its windows age out with the window, then a peer deletes the object.
package peers

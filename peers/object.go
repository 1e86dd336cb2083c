package peers

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/tlsplane/tlsplane/handshakes"
)

// The ConfigMap a replica publishes per topic: labelled (the topic's
// label) with its group (the leader election id), so peers list only
// their own group's.
const (
	annotationReplica  = "tlsplane.io/replica"
	annotationWritten  = "tlsplane.io/published"
	keyWindows         = "windows.json.gz"
	maxPublishedBytes  = 900 << 10 // under the API server's 1 MiB object limit
	maxDecompressBytes = 64 << 20  // a peer's object is trusted, but bounded anyway
)

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// objectName is the replica's ConfigMap of a topic (kind): readable, and
// unique by a hash.
func objectName(group, kind, replica string) string {
	sum := sha256.Sum256([]byte(replica))
	readable := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(replica), "-"), "-")
	name := group + "-" + kind + "-" + readable
	if len(name) > 200 {
		name = name[:200]
	}
	return strings.TrimRight(name, "-") + "-" + hex.EncodeToString(sum[:4])
}

// groupLabel is a valid label value naming the group.
func groupLabel(group string) string {
	if len(group) <= 63 {
		return group
	}
	sum := sha256.Sum256([]byte(group))
	return group[:46] + "-" + hex.EncodeToString(sum[:8])
}

// encode gzips s's JSON; when it is too large for an object, it keeps the
// failing windows, which the conditions need most, as many as fit.
func encode(s handshakes.Shared) ([]byte, error) {
	data, err := gzipJSON(s)
	if err != nil || len(data) <= maxPublishedBytes {
		return data, err
	}
	failing := s
	failing.Windows = nil
	for _, w := range s.Windows {
		if w.LastFailure.After(w.LastSuccess) {
			failing.Windows = append(failing.Windows, w)
		}
	}
	for {
		if data, err = gzipJSON(failing); err != nil || len(data) <= maxPublishedBytes {
			return data, err
		}
		failing.Windows = failing.Windows[:len(failing.Windows)/2]
	}
}

func gzipJSON(s any) ([]byte, error) {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	if err := json.NewEncoder(z).Encode(s); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decode(data []byte) (handshakes.Shared, error) {
	var s handshakes.Shared
	err := decodeJSON(data, keyWindows, &s)
	return s, err
}

// decodeJSON reads gzipped JSON from data, bounded, into v; key names the
// data in errors.
func decodeJSON(data []byte, key string, v any) error {
	z, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	raw, err := io.ReadAll(io.LimitReader(z, maxDecompressBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if len(raw) > maxDecompressBytes {
		return fmt.Errorf("%s: over %d bytes uncompressed", key, maxDecompressBytes)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

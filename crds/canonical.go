package crds

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"sync"
)

// canonicalBuffers reuses the encoding buffers: admission hashes several
// values an object, and the collector is a quarter of its CPU.
var canonicalBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledCanonical keeps one huge object's buffer from staying pooled.
const maxPooledCanonical = 1 << 20

// canonicalSum is the SHA-256 of value's canonical encoding: every value
// tagged with its type (int64 and float64 differ, as they do to CEL and the
// schema), lengths before contents, object keys sorted. ok is false for a
// type a decoded object does not hold, which is then not memoized.
func canonicalSum(value any) (sum [sha256.Size]byte, ok bool) {
	bp := canonicalBuffers.Get().(*[]byte)
	b, ok := appendCanonical((*bp)[:0], value)
	if ok {
		sum = sha256.Sum256(b)
	}
	if cap(b) <= maxPooledCanonical {
		*bp = b
		canonicalBuffers.Put(bp)
	}
	return sum, ok
}

func appendCanonical(b []byte, value any) ([]byte, bool) {
	switch v := value.(type) {
	case nil:
		return append(b, 'n'), true
	case bool:
		if v {
			return append(b, 't'), true
		}
		return append(b, 'f'), true
	case int64:
		return binary.BigEndian.AppendUint64(append(b, 'i'), uint64(v)), true
	case float64:
		return binary.BigEndian.AppendUint64(append(b, 'd'), math.Float64bits(v)), true
	case string:
		return appendCanonicalString(append(b, 's'), v), true
	case []any:
		if v == nil {
			return append(b, 'L'), true // a nil list is not an empty one to every reader
		}
		b = binary.AppendUvarint(append(b, 'l'), uint64(len(v)))
		for _, e := range v {
			var ok bool
			if b, ok = appendCanonical(b, e); !ok {
				return b, false
			}
		}
		return b, true
	case map[string]any:
		if v == nil {
			return append(b, 'M'), true
		}
		b = binary.AppendUvarint(append(b, 'm'), uint64(len(v)))
		var small [16]string
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = appendCanonicalString(b, k)
			var ok bool
			if b, ok = appendCanonical(b, v[k]); !ok {
				return b, false
			}
		}
		return b, true
	}
	return b, false
}

func appendCanonicalString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendCanonicalLen(b []byte, n int) []byte {
	return binary.AppendUvarint(b, uint64(n))
}

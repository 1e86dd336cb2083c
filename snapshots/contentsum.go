package snapshots

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
)

// contentSum is a type's content as a multiset hash: the sum, modulo
// 2^256, of a SHA-256 per resource of its name and content hash. Equal
// sets of resources have equal sums whatever their order, and one
// resource changing is one subtraction and one addition, so a publish
// that changes three resources among 30,000 versions each type at the
// cost of three, not by hashing the whole type again.
type contentSum [4]uint64

// elementOf is one resource's term of the sum.
func elementOf(name, wire string) contentSum {
	h := sha256.New()
	var length [8]byte
	for _, c := range []string{name, wire} {
		binary.BigEndian.PutUint64(length[:], uint64(len(c)))
		h.Write(length[:])
		h.Write([]byte(c))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sumElement(sum)
}

// sumElement is a SHA-256 as a term of a sum.
func sumElement(sum [sha256.Size]byte) contentSum {
	var e contentSum
	for i := range e {
		e[i] = binary.BigEndian.Uint64(sum[8*i:])
	}
	return e
}

// add adds e (sign 1) or takes it away (-1).
func (s *contentSum) add(e contentSum, sign int) {
	if sign < 0 {
		var borrow uint64
		for i := range s {
			s[i], borrow = bits.Sub64(s[i], e[i], borrow)
		}
		return
	}
	var carry uint64
	for i := range s {
		s[i], carry = bits.Add64(s[i], e[i], carry)
	}
}

// version is the sum as a type version: 16 hex digits of a hash of it,
// as long as every other version tlsplane sends.
func (s contentSum) version() string {
	b := s.bytes()
	h := sha256.Sum256(b[:])
	return hex.EncodeToString(h[:8])
}

// bytes is the sum, big-endian.
func (s contentSum) bytes() [32]byte {
	var b [32]byte
	for i, w := range s {
		binary.BigEndian.PutUint64(b[8*i:], w)
	}
	return b
}

// sumOf is the content sum of digested resources.
func sumOf(enc []*digest) contentSum {
	var s contentSum
	for _, e := range enc {
		s.add(e.element, 1)
	}
	return s
}

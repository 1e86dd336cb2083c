package xds

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/snapshots"
)

// HTTP/2 frame types and the error code of a keepalive violation (RFC 9113).
const (
	frameSettings         = 0x4
	framePing             = 0x6
	frameGoAway           = 0x7
	errEnhanceYourCalm    = 0xb
	http2ClientPreface    = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	http2FrameHeaderBytes = 9
)

func writeFrame(t *testing.T, conn net.Conn, typ, flags byte, payload []byte) {
	t.Helper()
	header := make([]byte, http2FrameHeaderBytes)
	header[0], header[1], header[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	header[3], header[4] = typ, flags
	if _, err := conn.Write(append(header, payload...)); err != nil {
		t.Fatal(err)
	}
}

// A client pinging far more often than KeepaliveMinTime is sent GOAWAY
// ENHANCE_YOUR_CALM and disconnected, as the enforcement policy says.
// Raw frames: grpc-go's own client refuses keepalive times under 10 s.
func TestKeepaliveEnforcementEndsAPingFlood(t *testing.T) {
	h := start(t, snapshots.Options{})
	conn, err := net.DialTimeout("tcp", h.addr, patience)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(patience)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, http2ClientPreface); err != nil {
		t.Fatal(err)
	}
	writeFrame(t, conn, frameSettings, 0, nil)
	const pings = 10
	for i := range pings {
		payload := make([]byte, 8)
		binary.BigEndian.PutUint64(payload, uint64(i))
		writeFrame(t, conn, framePing, 0, payload)
	}
	for frames := 0; frames < 100; frames++ {
		header := make([]byte, http2FrameHeaderBytes)
		if _, err := io.ReadFull(conn, header); err != nil {
			t.Fatalf("connection ended without GOAWAY after %d frames: %v", frames, err)
		}
		length := int(header[0])<<16 | int(header[1])<<8 | int(header[2])
		payload := make([]byte, length)
		if _, err := io.ReadFull(conn, payload); err != nil {
			t.Fatal(err)
		}
		if header[3] != frameGoAway {
			continue
		}
		if code := binary.BigEndian.Uint32(payload[4:8]); code != errEnhanceYourCalm {
			t.Fatalf("GOAWAY with error code %#x, want ENHANCE_YOUR_CALM", code)
		}
		return
	}
	t.Fatal("no GOAWAY in 100 frames after a ping flood")
}

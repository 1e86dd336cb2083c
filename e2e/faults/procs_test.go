package faults

import (
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// process is tlsplane's harness.Process. dir_test.go says logTail and
// eventually; these two names stay until it says LogTail and
// harness.Eventually.
type process struct{ *harness.Process }

func (p *process) logTail(n int) string { return p.LogTail(n) }

func eventually(timeout, interval time.Duration, cond func() error) error {
	return harness.Eventually(timeout, interval, cond)
}

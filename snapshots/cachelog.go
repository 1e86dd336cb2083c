package snapshots

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/envoyproxy/go-control-plane/pkg/log"
)

// cacheLogger routes go-control-plane's printf logs into slog. Its Info is
// per-watch chatter, so it goes to Debug.
type cacheLogger struct{ log *slog.Logger }

var _ log.Logger = cacheLogger{}

// NewCacheLogger lets package xds hand the same adapter to the gRPC server.
func NewCacheLogger(l *slog.Logger) log.Logger { return cacheLogger{log: l} }

func (l cacheLogger) Debugf(format string, args ...any) { l.logf(slog.LevelDebug, format, args) }
func (l cacheLogger) Infof(format string, args ...any)  { l.logf(slog.LevelDebug, format, args) }
func (l cacheLogger) Warnf(format string, args ...any)  { l.logf(slog.LevelWarn, format, args) }
func (l cacheLogger) Errorf(format string, args ...any) { l.logf(slog.LevelError, format, args) }

func (l cacheLogger) logf(level slog.Level, format string, args []any) {
	// Formatting is skipped when the level is off: the cache logs per watch.
	if l.log.Enabled(context.Background(), level) {
		l.log.Log(context.Background(), level, fmt.Sprintf(format, args...), "component", "go-control-plane")
	}
}

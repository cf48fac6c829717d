// Package lazylog defers a logger's WithValues until a line is written. controller-runtime gives every reconcile a
// logger with the controller's and the object's names (two WithValues); zap encodes those values into a new buffer
// at once, although most reconciles write no line. At a thousand installs that was about a tenth of everything ALM
// allocated. A logger from New keeps the values and hands them to the logger it wraps only for a line that is
// written, with the same output.
package lazylog

import (
	"slices"

	"github.com/go-logr/logr"
)

// New wraps l so that WithValues costs a slice append until a line is written.
func New(l logr.Logger) logr.Logger {
	sink := l.GetSink()
	if sink == nil {
		return l
	}
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1) // the caller is the one who logs, not this package
	}
	return logr.New(&lazySink{base: sink})
}

// lazySink is base with values kv not yet given to it.
type lazySink struct {
	base logr.LogSink
	kv   []any
}

var (
	_ logr.LogSink          = (*lazySink)(nil)
	_ logr.CallDepthLogSink = (*lazySink)(nil)
)

// Init does nothing: base was initialized by the logger it came from.
func (s *lazySink) Init(logr.RuntimeInfo) {}

func (s *lazySink) Enabled(level int) bool { return s.base.Enabled(level) }

func (s *lazySink) Info(level int, msg string, kv ...any) { s.applied().Info(level, msg, kv...) }

func (s *lazySink) Error(err error, msg string, kv ...any) { s.applied().Error(err, msg, kv...) }

func (s *lazySink) WithValues(kv ...any) logr.LogSink {
	return &lazySink{base: s.base, kv: append(slices.Clip(s.kv), kv...)}
}

// WithName gives base the deferred values, then the name.
func (s *lazySink) WithName(name string) logr.LogSink {
	return &lazySink{base: s.applied().WithName(name)}
}

func (s *lazySink) WithCallDepth(depth int) logr.LogSink {
	base := s.base
	if cd, ok := base.(logr.CallDepthLogSink); ok {
		base = cd.WithCallDepth(depth)
	}
	return &lazySink{base: base, kv: s.kv}
}

// applied is base with the deferred values given to it.
func (s *lazySink) applied() logr.LogSink {
	if len(s.kv) == 0 {
		return s.base
	}
	return s.base.WithValues(s.kv...)
}

package lazylog

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// countingSink counts the WithValues calls that reach it.
type countingSink struct {
	logr.LogSink
	withValues *int
}

func (s countingSink) WithValues(kv ...any) logr.LogSink {
	*s.withValues++
	return countingSink{LogSink: s.LogSink.WithValues(kv...), withValues: s.withValues}
}

// TestSameLinesAsTheWrappedLogger writes the same lines through a zap logger and through New of it, and wants the
// same entries: message, level, name, fields in order, and the caller (this file, not the package's).
func TestSameLinesAsTheWrappedLogger(t *testing.T) {
	write := func(l logr.Logger) {
		l = l.WithName("ctrl").WithValues("controller", "install", "namespace", "ns1")
		l.WithValues("reconcileID", "r1").Info("applied", "objects", 7)
		l.V(1).Info("not written at this level")
		l.WithValues("name", "ov1").Error(errors.New("boom"), "failed", "attempt", 2)
		l.WithValues("a", 1).WithName("sub").WithValues("b", 2).Info("nested")
	}
	entries := func(wrap func(logr.Logger) logr.Logger) []observer.LoggedEntry {
		core, logs := observer.New(zapcore.InfoLevel)
		write(wrap(zapr.NewLogger(zap.New(core, zap.AddCaller()))))
		return logs.AllUntimed()
	}
	want := entries(func(l logr.Logger) logr.Logger { return l })
	got := entries(New)
	if len(got) != len(want) || len(want) != 3 {
		t.Fatalf("got %d entries, want %d (and 3): %v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Message != w.Message || g.Level != w.Level || g.LoggerName != w.LoggerName || !reflect.DeepEqual(g.Context, w.Context) {
			t.Errorf("entry %d: got %q %s %q %v, want %q %s %q %v", i, g.Message, g.Level, g.LoggerName, g.Context, w.Message, w.Level, w.LoggerName, w.Context)
		}
		if base := filepath.Base(g.Caller.File); base != "lazylog_test.go" || g.Caller.Line != w.Caller.Line {
			t.Errorf("entry %d: caller %s:%d, want lazylog_test.go:%d", i, base, g.Caller.Line, w.Caller.Line)
		}
	}
}

// TestValuesReachTheWrappedLoggerOnlyForALine: a reconcile's loggers (two WithValues) that write nothing cost the
// wrapped logger nothing; a line written gives it the values once.
func TestValuesReachTheWrappedLoggerOnlyForALine(t *testing.T) {
	n := 0
	core, _ := observer.New(zapcore.InfoLevel)
	l := New(logr.New(countingSink{LogSink: zapr.NewLogger(zap.New(core)).GetSink(), withValues: &n}))
	for range 100 {
		r := l.WithValues("controller", "install").WithValues("reconcileID", "x")
		r.V(1).Info("debug only")
	}
	if n != 0 {
		t.Fatalf("100 reconciles that wrote no line called the wrapped WithValues %d times, want 0", n)
	}
	l.WithValues("controller", "install").WithValues("reconcileID", "x").Info("written")
	if n != 1 {
		t.Fatalf("one line written called the wrapped WithValues %d times, want 1", n)
	}
}

package cluster

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
)

// recordHandler is a slog.Handler that keeps the records it is given, with
// the attributes of WithAttrs and WithGroup resolved into them.
type recordHandler struct {
	level   slog.Level
	mu      *sync.Mutex
	records *[]slog.Record
}

func newRecordHandler(level slog.Level) *recordHandler {
	return &recordHandler{level: level, mu: new(sync.Mutex), records: new([]slog.Record)}
}

func (h *recordHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.records = append(*h.records, r.Clone())
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { panic("not used by zapSlogCore") }
func (h *recordHandler) WithGroup(string) slog.Handler      { panic("not used by zapSlogCore") }

func (h *recordHandler) all() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]slog.Record(nil), *h.records...)
}

// attrs returns a record's attributes by key, groups as nested maps.
func attrs(r slog.Record) map[string]any {
	m := map[string]any{}
	r.Attrs(func(a slog.Attr) bool { addAttr(m, a); return true })
	return m
}

func addAttr(m map[string]any, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		g := map[string]any{}
		for _, ga := range v.Group() {
			addAttr(g, ga)
		}
		m[a.Key] = g
		return
	}
	m[a.Key] = v.Any()
}

func TestZapSlogCore(t *testing.T) {
	h := newRecordHandler(slog.LevelInfo)
	lg := newZapSlog(func() *slog.Logger { return slog.New(h) }).Named("etcd-client")

	errBoom := errors.New("boom")
	lg.Debug("dropped: below the handler's level")
	_, file, line, _ := runtime.Caller(0)
	lg.With(zap.String("endpoint", "127.0.0.1:2379")).Warn("retrying",
		zap.Error(errBoom), zap.Int("attempt", 3), zap.Duration("backoff", 25*time.Millisecond),
		zap.Strings("endpoints", []string{"a", "b"}), zap.Namespace("lease"), zap.Int64("id", 7))
	lg.Error("failed")

	recs := h.all()
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2 (debug dropped): %v", len(recs), recs)
	}
	r := recs[0]
	if r.Message != "retrying" || r.Level != slog.LevelWarn {
		t.Fatalf("record %q at %v, want \"retrying\" at WARN", r.Message, r.Level)
	}
	if time.Since(r.Time) > time.Minute || r.Time.After(time.Now()) {
		t.Errorf("record time %v", r.Time)
	}
	got := attrs(r)
	if got["logger"] != "etcd-client" || got["endpoint"] != "127.0.0.1:2379" || got["attempt"] != int64(3) ||
		got["backoff"] != 25*time.Millisecond {
		t.Errorf("attributes %v", got)
	}
	if err, _ := got["error"].(error); !errors.Is(err, errBoom) {
		t.Errorf("error attribute %#v, want the error value", got["error"])
	}
	if eps, _ := got["endpoints"].([]any); len(eps) != 2 || eps[0] != "a" || eps[1] != "b" {
		t.Errorf("endpoints attribute %#v", got["endpoints"])
	}
	if lease, _ := got["lease"].(map[string]any); lease == nil || lease["id"] != int64(7) {
		t.Errorf("namespace lease: %#v", got["lease"])
	}
	src := r.Source()
	if src == nil || filepath.Base(src.File) != filepath.Base(file) || src.Line != line+1 {
		t.Errorf("source %+v, want %s:%d", src, filepath.Base(file), line+1)
	}
	if recs[1].Level != slog.LevelError || recs[1].Message != "failed" {
		t.Errorf("second record %q at %v", recs[1].Message, recs[1].Level)
	}
}

func TestZapSlogLevels(t *testing.T) {
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		h := newRecordHandler(l)
		lg := newZapSlog(func() *slog.Logger { return slog.New(h) })
		lg.Debug("d")
		lg.Info("i")
		lg.Warn("w")
		lg.Error("e")
		var got []slog.Level
		for _, r := range h.all() {
			got = append(got, r.Level)
		}
		want := 4 - int(l+4)/4 // Debug: 4 records, Info: 3, Warn: 2, Error: 1
		if len(got) != want || got[0] != l {
			t.Errorf("handler level %v: got levels %v", l, got)
		}
	}
}

func TestEtcdLogTarget(t *testing.T) {
	var l etcdLog
	if l.logger() != slog.Default() {
		t.Error("before the member starts: want slog.Default()")
	}
	member := slog.New(newRecordHandler(slog.LevelInfo))
	l.member.Store(member)
	if l.logger() != member {
		t.Error("after the member starts: want the member's logger")
	}
	fixed := slog.New(newRecordHandler(slog.LevelInfo))
	l.fixed = fixed
	if l.logger() != fixed {
		t.Error("with WithEtcdLogger: want its logger")
	}
}

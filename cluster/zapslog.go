package cluster

import (
	"context"
	"log/slog"
	"maps"
	"slices"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newZapSlog returns a zap logger whose entries go to the slog logger that
// logger returns at the time of each entry: the etcd client logs with zap,
// ringactor with slog. go.uber.org/zap/exp/zapslog only goes the other way
// (a slog.Handler writing to a zap core).
func newZapSlog(logger func() *slog.Logger) *zap.Logger {
	return zap.New(&zapSlogCore{logger: logger}, zap.AddCaller())
}

// zapSlogCore is a zapcore.Core that forwards each entry to a slog logger
// as one record: zap's level, time, message, caller (the record's PC, for
// slog's AddSource), logger name (attribute "logger"), fields (attributes;
// an error field keeps its error value, a zap.Namespace opens a group of
// the fields after it) and stack (attribute "stack").
type zapSlogCore struct {
	logger func() *slog.Logger
	// fields are those of With, converted with the entry's at each Write so
	// that a namespace among them also holds the entry's fields.
	fields []zapcore.Field
}

// slogLevel maps a zap level to slog's: DPanic, Panic and Fatal are errors
// (zap itself panics or exits after writing them).
func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l < zapcore.InfoLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// Enabled implements zapcore.LevelEnabler with the slog logger's level.
func (c *zapSlogCore) Enabled(l zapcore.Level) bool {
	return c.logger().Enabled(context.Background(), slogLevel(l))
}

// With implements zapcore.Core.
func (c *zapSlogCore) With(fields []zapcore.Field) zapcore.Core {
	return &zapSlogCore{logger: c.logger, fields: append(slices.Clip(c.fields), fields...)}
}

// Check implements zapcore.Core.
func (c *zapSlogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write implements zapcore.Core.
func (c *zapSlogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	var pc uintptr
	if e.Caller.Defined {
		pc = e.Caller.PC
	}
	r := slog.NewRecord(e.Time, slogLevel(e.Level), e.Message, pc)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	all := fields
	if len(c.fields) > 0 {
		all = append(slices.Clip(c.fields), fields...)
	}
	r.AddAttrs(zapAttrs(all)...)
	if e.Stack != "" {
		r.AddAttrs(slog.String("stack", e.Stack))
	}
	return c.logger().Handler().Handle(context.Background(), r)
}

// Sync implements zapcore.Core; slog handlers have nothing to flush.
func (c *zapSlogCore) Sync() error { return nil }

// zapAttrs converts zap fields to slog attributes.
func zapAttrs(fields []zapcore.Field) []slog.Attr {
	attrs := make([]slog.Attr, 0, len(fields))
	for i, f := range fields {
		switch f.Type {
		case zapcore.SkipType:
			continue
		case zapcore.NamespaceType:
			return append(attrs, slog.Attr{Key: f.Key, Value: slog.GroupValue(zapAttrs(fields[i+1:])...)})
		case zapcore.ErrorType:
			if err, ok := f.Interface.(error); ok {
				attrs = append(attrs, slog.Any(f.Key, err))
				continue
			}
		}
		// Every other type as zap's map encoder gives it: strings,
		// numbers, durations, times as such; arrays and objects as slices
		// and maps. A field may add several keys (zap.Inline).
		enc := zapcore.NewMapObjectEncoder()
		f.AddTo(enc)
		for _, k := range slices.Sorted(maps.Keys(enc.Fields)) {
			attrs = append(attrs, slog.Any(k, enc.Fields[k]))
		}
	}
	return attrs
}

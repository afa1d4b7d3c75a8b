package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// logFlags are the --log-level and --log-format flags every command has.
type logFlags struct {
	level  string
	format string
	// set reports whether --log-level was given (it then wins over a
	// command's own default and -v).
	set bool
}

// define adds the flags to fs.
func (l *logFlags) define(fs *flagSet) {
	fs.StringVar(&l.level, "log-level", "", "lowest level logged: debug, info, warn or error (default: the command's, info for most; -v means debug)")
	fs.StringVar(&l.format, "log-format", "text", "log format on stderr: text or json")
}

// check reports a bad --log-level or --log-format.
func (l *logFlags) check() error {
	if l.level != "" {
		if _, err := parseLevel(l.level); err != nil {
			return err
		}
	}
	switch l.format {
	case "text", "json":
		return nil
	}
	return fmt.Errorf("--log-format must be text or json, got %q", l.format)
}

// parseLevel parses a --log-level value.
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil || strings.ContainsAny(s, "+-") {
		return 0, fmt.Errorf("--log-level must be debug, info, warn or error, got %q", s)
	}
	return l, nil
}

// logger returns the command's logger on w: at --log-level when given,
// else at def (debug when verbose), in --log-format. Every log record of the
// command and the library goes through it; errors are under the key "error".
func (l *logFlags) logger(w io.Writer, def slog.Level, verbose bool) *slog.Logger {
	level := def
	if verbose {
		level = slog.LevelDebug
	}
	if l.level != "" {
		if v, err := parseLevel(l.level); err == nil {
			level = v
		}
	}
	opts := &slog.HandlerOptions{Level: level}
	if l.format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

package sensor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/ringactor/ringactor/actors"
)

// OutputHeader is the first line of the output.
const OutputHeader = "sensor,window_start_ms,count,min,max,mean"

// ErrTooManyRejects is what a run with Config.LimitRejects fails with (wrapped)
// once more than Config.MaxRejects rows have been rejected.
var ErrTooManyRejects = errors.New("too many rejected rows")

// sink is the sink stage's state: buffered writers and what it has written.
type sink struct {
	out, rej  *bufio.Writer
	streaming bool
	limit     bool  // stop after more than maxRej rejects
	maxRej    int64 // Config.MaxRejects
	started   bool  // the header is written
	windows   int64
	rejected  int64 // reject lines written
	line      []byte
	err       error // the failure that has stopped the sink: it writes no more
}

// newSinkHandler is the sink kernel's factory: it writes windows as CSV to
// out and rejected rows to rej.
func newSinkHandler(cfg Config, out, rej io.Writer) func() actors.Handler[*Emit, Progress] {
	return func() actors.Handler[*Emit, Progress] {
		s := &sink{out: bufio.NewWriterSize(out, 64<<10), rej: bufio.NewWriterSize(rej, 4<<10), streaming: cfg.Streaming,
			limit: cfg.LimitRejects, maxRej: cfg.MaxRejects}
		return s.handle
	}
}

// handle writes one Emit: its rejects, then its windows. It flushes the
// rejects at once, the windows at once in streaming mode, and everything at
// the end of input, after the "rejected N rows" line.
func (s *sink) handle(_ context.Context, e *Emit) (Progress, error) {
	if s.err != nil {
		return Progress{}, s.err
	}
	p, err := s.write(e)
	if err != nil {
		s.err = err
	}
	return p, err
}

// write writes one Emit: see handle.
func (s *sink) write(e *Emit) (Progress, error) {
	if !s.started {
		s.started = true
		s.out.WriteString(OutputHeader + "\n")
	}
	for _, r := range e.Rejects {
		fmt.Fprintf(s.rej, "line %d: %s\n", r.Line, r.Reason)
		s.rejected++
		if s.limit && s.rejected > s.maxRej {
			if err := s.rej.Flush(); err != nil {
				return Progress{}, fmt.Errorf("write rejects: %w", err)
			}
			return Progress{}, fmt.Errorf("%w: more than %d (stopped at line %d)", ErrTooManyRejects, s.maxRej, r.Line)
		}
	}
	for i := range e.Windows {
		s.line = appendWindow(s.line[:0], &e.Windows[i])
		s.out.Write(s.line)
	}
	s.windows += int64(len(e.Windows))
	stats := e.Stats
	stats.Windows = s.windows
	if e.Final {
		s.rej.WriteString(rejectedLine(stats.Rejected))
	}
	if len(e.Rejects) > 0 || e.Final {
		if err := s.rej.Flush(); err != nil {
			return Progress{}, fmt.Errorf("write rejects: %w", err)
		}
	}
	if (s.streaming && len(e.Windows) > 0) || e.Final {
		if err := s.out.Flush(); err != nil {
			return Progress{}, fmt.Errorf("write output: %w", err)
		}
	}
	return Progress{Done: e.Final, Stats: stats}, nil
}

// appendWindow appends w as one CSV output line.
func appendWindow(b []byte, w *WindowStat) []byte {
	b = appendField(b, w.Sensor)
	b = append(b, ',')
	b = strconv.AppendInt(b, w.Start, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, w.Count, 10)
	b = append(b, ',')
	b = strconv.AppendFloat(b, w.Min, 'g', -1, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, w.Max, 'g', -1, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, w.Mean, 'g', -1, 64)
	return append(b, '\n')
}

// appendField appends f as a CSV field, quoted when encoding/csv's Writer
// would quote it: when it holds a comma, a quote, a CR or an LF, starts with
// a space character or is `\.`. A quoted field's quotes are doubled.
func appendField(b []byte, f string) []byte {
	if !needsQuotes(f) {
		return append(b, f...)
	}
	b = append(b, '"')
	for i := range len(f) {
		if f[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, f[i])
	}
	return append(b, '"')
}

// needsQuotes is encoding/csv's Writer.fieldNeedsQuotes for the comma.
func needsQuotes(f string) bool {
	if f == "" {
		return false
	}
	if f == `\.` {
		return true
	}
	for i := range len(f) {
		if c := f[i]; c == '\n' || c == '\r' || c == '"' || c == ',' {
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(f)
	return unicode.IsSpace(r)
}

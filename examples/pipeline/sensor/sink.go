package sensor

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/ringactor/ringactor/actors"
)

// OutputHeader is the first line of the output.
const OutputHeader = "sensor,window_start_ms,count,min,max,mean"

// sink is the sink stage's state: buffered writers and what it has written.
type sink struct {
	out, rej  *bufio.Writer
	streaming bool
	started   bool // the header is written
	windows   int64
	line      []byte
}

// newSinkHandler is the sink kernel's factory: it writes windows as CSV to
// out and rejected rows to rej.
func newSinkHandler(cfg Config, out, rej io.Writer) func() actors.Handler[*Emit, Progress] {
	return func() actors.Handler[*Emit, Progress] {
		s := &sink{out: bufio.NewWriterSize(out, 64<<10), rej: bufio.NewWriterSize(rej, 4<<10), streaming: cfg.Streaming}
		return s.handle
	}
}

// handle writes one Emit: its rejects, then its windows. It flushes the
// rejects at once, the windows at once in streaming mode, and everything at
// the end of input, after the "rejected N rows" line.
func (s *sink) handle(_ context.Context, e *Emit) (Progress, error) {
	if !s.started {
		s.started = true
		s.out.WriteString(OutputHeader + "\n")
	}
	for _, r := range e.Rejects {
		fmt.Fprintf(s.rej, "line %d: %s\n", r.Line, r.Reason)
	}
	for i := range e.Windows {
		s.line = appendWindow(s.line[:0], &e.Windows[i])
		s.out.Write(s.line)
	}
	s.windows += int64(len(e.Windows))
	stats := e.Stats
	stats.Windows = s.windows
	if e.Final {
		fmt.Fprintf(s.rej, "rejected %d rows\n", stats.Rejected)
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
	b = append(b, w.Sensor...)
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

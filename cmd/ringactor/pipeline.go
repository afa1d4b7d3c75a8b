package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/stream/sensor"
)

// Help text of the pipeline command.
const (
	pipelineSynopsis    = "[--window-ms W] [--scale S] [--offset O] [--lateness-ms L] [--max-rejects N] [--device[=sim]] [FILE | -]"
	pipelineDescription = `Stream sensor readings through a stream graph of ring kernels,
parse → scale → window → sink, and print per-sensor tumbling-window
statistics as CSV on stdout.

Input (FILE, or stdin when FILE is - or absent): CSV lines
"sensor,ts_ms,value", LF or CRLF, an optional header line
"sensor,ts_ms,value", blank lines ignored, a leading UTF-8 byte order mark
skipped. Fields may be quoted as RFC 4180 says ("a,b" holds a comma, ""
stands for a quote), within one line. A row with broken quoting, other than
3 fields, a timestamp that is not an int64, or a value that is not a
finite number, or whose scaled value v × S + O overflows, is rejected:
reported on stderr as "line N: reason" (quoting at most 80 bytes of the
field) and counted; when any row was rejected the run ends with "rejected
N rows" on stderr. --max-rejects N stops the run with an error (exit status
1) at the first rejected row beyond N; the default, -1, allows any number.
When there are rows and every one of them is rejected, the exit status is
1.

Each value becomes v × S + O. Windows are W ms wide and start at
floor(ts / W) × W. Output: "sensor,window_start_ms,count,min,max,mean", one
row per (sensor, window); floats print so that they parse back exactly, and
sensor names are quoted as encoding/csv quotes them.

Without --lateness-ms every window is held until the end of input (exact
for any event order) and rows are ordered by sensor (byte order), then
window start. With --lateness-ms L a window is written once the newest
timestamp seen (over all sensors) is L past its end, so memory stays
bounded on endless input; an event for a window that has closed is
rejected as late ("line N: late event for window ..."). Rows then come out
as windows close: ordered by window start, then sensor.

--device runs the scale stage's arithmetic as a device ring kernel (a CUDA
handler in a persistent GPU loop, with a Go fallback where no GPU can run
it); --device=sim runs it on the simulated device (the same program built
for the host), so a machine without a GPU exercises the device path. The
output is the same as without --device, bit for bit. With --device each
stage's placement is printed on stderr as "stage NAME: PLACEMENT" (e.g.
"stage scale: cuda:sim", "stage window: cpu").

The rings are bounded: a slow consumer of stdout slows the reading down.
Flags may come before or after FILE.
`
)

// pipelineCommand is the "pipeline" subcommand.
var pipelineCommand = command{
	name:    "pipeline",
	summary: "stream sensor CSV through a parse → scale → window → sink graph of ring kernels; per-window stats as CSV",
	run:     runPipelineCommand,
}

// pipelineStdin is what the pipeline reads when FILE is - or absent; tests
// replace it.
var pipelineStdin io.Reader = os.Stdin

// runPipelineCommand parses the pipeline's flags and runs it on FILE or
// stdin.
func runPipelineCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("pipeline", pipelineSynopsis, pipelineDescription, stderr)
	cfg := sensor.DefaultConfig()
	fs.Int64Var(&cfg.WindowMS, "window-ms", cfg.WindowMS, "tumbling window width `W` in milliseconds (at least 1)")
	fs.Float64Var(&cfg.Scale, "scale", cfg.Scale, "multiply every value by `S` (finite)")
	fs.Float64Var(&cfg.Offset, "offset", cfg.Offset, "then add `O` (finite)")
	lateness := fs.Int64("lateness-ms", 0, "stream: write a window once the newest timestamp is `L` ms past its end (at least 0); unset: hold every window until the end of input")
	maxRejects := fs.Int64("max-rejects", -1, "stop with an error at the first rejected row beyond `N` (0: none allowed; -1: any number)")
	var device deviceFlag
	fs.Var(&device, "device", "run the scale stage as a device ring kernel; --device=sim on the simulated device")
	verbose := fs.Bool("v", false, "log at debug level (by default only warnings and errors are logged: stderr is for rejected rows)")
	files, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(files) > 1 {
		return usageError(fs, "want at most one FILE, got %q", files)
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "lateness-ms" {
			cfg.Streaming = true
		}
	})
	cfg.LatenessMS = *lateness
	if *maxRejects < -1 {
		return usageError(fs, "--max-rejects must be -1 (no limit) or at least 0, got %d", *maxRejects)
	}
	cfg.LimitRejects, cfg.MaxRejects = *maxRejects >= 0, max(*maxRejects, 0)
	if err := cfg.Validate(); err != nil {
		return usageError(fs, "%v", err)
	}
	log := fs.log.logger(stderr, slog.LevelWarn, *verbose)

	in := pipelineStdin
	if len(files) == 1 && files[0] != "-" {
		f, err := os.Open(files[0])
		if err != nil {
			return failure(stderr, "pipeline", err)
		}
		defer f.Close()
		in = f
	}
	devOpts, release, err := pipelineDevice(device.mode, &cfg, stderr)
	if err != nil {
		return failure(stderr, "pipeline", err)
	}
	defer release()
	st, err := sensor.Run(ctx, cfg, in, stdout, stderr, append([]actors.Option{actors.WithLogger(log)}, devOpts...)...)
	if errors.Is(err, sensor.ErrTooManyRejects) {
		// The rejects are on stderr already; the kernel's wrapping says nothing more.
		err = fmt.Errorf("stopped: more than %d rows rejected (--max-rejects %d)", cfg.MaxRejects, cfg.MaxRejects)
	}
	if err != nil {
		return failure(stderr, "pipeline", err)
	}
	if st.Rows > 0 && st.Rejected == st.Rows {
		return failure(stderr, "pipeline", fmt.Errorf("every row was rejected (%s)", plural(st.Rows, "row")))
	}
	return exitOK
}

// parseInterspersed parses args into fs, letting flags and positional
// arguments mix ("--" ends the flags), and returns the positional
// arguments. When ok is false the command must not run and code is its exit
// status: exitOK for -h, exitUsage for a bad flag (already reported).
func parseInterspersed(fs *flagSet, args []string) (pos []string, code int, ok bool) {
	for {
		if code, ok := fs.parse(args); !ok {
			return nil, code, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, exitOK, true
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), exitOK, true
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

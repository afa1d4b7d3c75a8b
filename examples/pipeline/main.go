// Command pipeline is ringactor's streaming sensor pipeline example: a
// stream graph of ring kernels, parse → scale → window → sink, that
// turn CSV readings "sensor,ts_ms,value" into per-sensor tumbling-window
// statistics (count, min, max, mean). The pipeline itself is package
// github.com/ringactor/ringactor/stream/sensor, whose documentation is the specification.
//
// Usage:
//
//	go run ./examples/pipeline [flags]          # a generated input; prints a summary
//	go run ./examples/pipeline [flags] FILE|-   # the CSV result on stdout, like `ringactor pipeline`
//
// Flags: -window-ms W (default 1000), -scale S (1), -offset O (0), and
// -lateness-ms L, which emits windows as they close (L ms after their end,
// by the newest timestamp seen) instead of holding all of them until the
// end of input. Rejected rows go to stderr as "line N: reason", then
// "rejected N rows". It follows ringactor's command-line rules: -h exits
// 0, a bad command line 2, a failure 1, and so does a run whose every row
// was rejected.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/stream/sensor"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses the command line, runs the pipeline and returns the exit
// status, by ringactor's rules: 0 (and -h prints the usage); 1 for a
// failure, or when there were rows and every one was rejected; 2 for a bad
// command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := sensor.DefaultConfig()
	fs := flag.NewFlagSet("pipeline", flag.ContinueOnError)
	fs.Int64Var(&cfg.WindowMS, "window-ms", cfg.WindowMS, "tumbling window width `W` in milliseconds (at least 1)")
	fs.Float64Var(&cfg.Scale, "scale", cfg.Scale, "multiply every value by `S` (finite)")
	fs.Float64Var(&cfg.Offset, "offset", cfg.Offset, "then add `O` (finite)")
	lateness := fs.Int64("lateness-ms", 0, "emit a window once the newest timestamp is `L` ms past its end (unset: hold all until the end)")
	fs.SetOutput(io.Discard) // a bad flag is reported below, in one line
	if err := fs.Parse(args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			return badCommandLine(stderr, err)
		}
		fmt.Fprintln(stderr, "Usage: pipeline [flags] [FILE | -]\n\n"+
			"Without FILE, a generated input and a summary; with FILE (- for stdin), the\n"+
			"CSV result on stdout and the rejected rows on stderr.\n\nFlags:")
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return 0
	}
	fs.Visit(func(f *flag.Flag) { cfg.Streaming = cfg.Streaming || f.Name == "lateness-ms" })
	cfg.LatenessMS = *lateness
	if fs.NArg() > 1 {
		return badCommandLine(stderr, fmt.Errorf("want at most one FILE, got %q", fs.Args()))
	}
	if err := cfg.Validate(); err != nil {
		return badCommandLine(stderr, errors.New(strings.TrimPrefix(err.Error(), "sensor: ")))
	}
	var (
		st  sensor.Stats
		err error
	)
	if fs.NArg() == 1 {
		st, err = runFile(ctx, cfg, fs.Arg(0), stdout, stderr)
	} else {
		st, err = demo(ctx, cfg, sensor.DefaultSynthetic(), stdout, stderr)
	}
	if err == nil && st.Rows > 0 && st.Rejected == st.Rows {
		err = fmt.Errorf("every row was rejected (%d of %d)", st.Rejected, st.Rows)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pipeline: %v\n", err)
		return 1
	}
	return 0
}

// badCommandLine reports a mistake on the command line in one line and a
// hint at -h, and returns exit status 2.
func badCommandLine(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "pipeline: %v\nRun 'pipeline -h' for usage.\n", err)
	return 2
}

// quiet logs only warnings and errors, on stderr: stderr is for rejected
// rows.
func quiet(stderr io.Writer) actors.Option {
	return actors.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// runFile streams the file called name (stdin for "-") to stdout.
func runFile(ctx context.Context, cfg sensor.Config, name string, stdout, stderr io.Writer) (sensor.Stats, error) {
	in := io.Reader(os.Stdin)
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return sensor.Stats{}, err
		}
		defer f.Close()
		in = f
	}
	return sensor.Run(ctx, cfg, in, stdout, stderr, quiet(stderr))
}

// demo streams the synthetic input g through the pipeline while the
// generator writes it into a pipe, and prints a summary with the first
// output rows and rejects.
func demo(ctx context.Context, cfg sensor.Config, g sensor.Synthetic, stdout, stderr io.Writer) (sensor.Stats, error) {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(sensor.Generate(pw, g)) }()
	defer pr.Close()
	out, rej := &head{max: 8}, &head{max: 4}
	start := time.Now()
	st, err := sensor.Run(ctx, cfg, pr, out, rej, quiet(stderr))
	elapsed := time.Since(start)
	if err != nil {
		return st, err
	}
	mode := "every window held until the end of input (exact; ordered by sensor, then window)"
	if cfg.Streaming {
		mode = fmt.Sprintf("windows emitted %d ms after their end (ordered by window, then sensor)", cfg.LatenessMS)
	}
	fmt.Fprintf(stdout, "ringactor sensor pipeline: reader → parse → scale → window → sink, a stream graph of ring kernels\n\n")
	fmt.Fprintf(stdout, "input   %d generated rows of %d sensors from t = %d ms, events up to %d ms out of order, 1 bad row in ~%d, streamed through a pipe\n",
		g.Rows, g.Sensors, g.StartMS, g.JitterMS, g.BadEvery)
	fmt.Fprintf(stdout, "config  %d ms windows, v' = v × %g + %g, %s\n", cfg.WindowMS, cfg.Scale, cfg.Offset, mode)
	fmt.Fprintf(stdout, "result  %d lines, %d rows, %d rejected (%d late), %d sensors, %d windows in %v: %.2fM rows/s\n\n",
		st.Lines, st.Rows, st.Rejected, st.Late, st.Sensors, st.Windows, elapsed.Round(time.Millisecond),
		float64(st.Rows)/elapsed.Seconds()/1e6)
	fmt.Fprintf(stdout, "output (first %d of %d lines):\n%s", len(out.lines), out.n, indent(out.lines))
	fmt.Fprintf(stdout, "\nstderr (first %d of %d lines):\n%s", len(rej.lines), rej.n, indent(rej.lines))
	fmt.Fprintf(stdout, "\nGive a FILE (or - for stdin) for the whole CSV on stdout; -lateness-ms L streams windows as they close.\n")
	return st, nil
}

// head is a writer that keeps the first max lines written to it and counts
// them all.
type head struct {
	max   int
	n     int
	part  strings.Builder
	lines []string
}

func (h *head) Write(p []byte) (int, error) {
	for _, c := range p {
		if c != '\n' {
			if len(h.lines) < h.max {
				h.part.WriteByte(c)
			}
			continue
		}
		h.n++
		if len(h.lines) < h.max {
			h.lines = append(h.lines, h.part.String())
			h.part.Reset()
		}
	}
	return len(p), nil
}

// indent formats lines indented by two spaces.
func indent(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

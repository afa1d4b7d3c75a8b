// Command pipeline is ringactor's streaming sensor pipeline example: a
// stream graph of ring kernels, parse → scale → window → sink, that
// turn CSV readings "sensor,ts_ms,value" into per-sensor tumbling-window
// statistics (count, min, max, mean). The pipeline itself is package
// examples/pipeline/sensor, whose documentation is the specification.
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
// "rejected N rows".
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/examples/pipeline/sensor"
)

func main() {
	cfg := sensor.DefaultConfig()
	flag.Int64Var(&cfg.WindowMS, "window-ms", cfg.WindowMS, "tumbling window width `W` in milliseconds")
	flag.Float64Var(&cfg.Scale, "scale", cfg.Scale, "multiply every value by `S`")
	flag.Float64Var(&cfg.Offset, "offset", cfg.Offset, "then add `O`")
	lateness := flag.Int64("lateness-ms", 0, "emit a window once the newest timestamp is `L` ms past its end (unset: hold all until the end)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: %s [flags] [FILE | -]\n\nWithout FILE, a generated input and a summary.\n\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	flag.Visit(func(f *flag.Flag) { cfg.Streaming = cfg.Streaming || f.Name == "lateness-ms" })
	cfg.LatenessMS = *lateness
	if flag.NArg() > 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if flag.NArg() == 1 {
		err = runFile(ctx, cfg, flag.Arg(0))
	} else {
		err = demo(ctx, cfg, sensor.DefaultSynthetic())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		stop()
		os.Exit(1)
	}
}

// quiet logs only warnings and errors: stderr is for rejected rows.
func quiet() actors.Option {
	return actors.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// runFile streams the file called name (stdin for "-") to stdout.
func runFile(ctx context.Context, cfg sensor.Config, name string) error {
	in := io.Reader(os.Stdin)
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	_, err := sensor.Run(ctx, cfg, in, os.Stdout, os.Stderr, quiet())
	return err
}

// demo streams the synthetic input g through the pipeline while the
// generator writes it into a pipe, and prints a summary with the first
// output rows and rejects.
func demo(ctx context.Context, cfg sensor.Config, g sensor.Synthetic) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(sensor.Generate(pw, g)) }()
	defer pr.Close()
	out, rej := &head{max: 8}, &head{max: 4}
	start := time.Now()
	st, err := sensor.Run(ctx, cfg, pr, out, rej, quiet())
	elapsed := time.Since(start)
	if err != nil {
		return err
	}
	mode := "every window held until the end of input (exact; ordered by sensor, then window)"
	if cfg.Streaming {
		mode = fmt.Sprintf("windows emitted %d ms after their end (ordered by window, then sensor)", cfg.LatenessMS)
	}
	fmt.Printf("ringactor sensor pipeline: reader → parse → scale → window → sink, a stream graph of ring kernels\n\n")
	fmt.Printf("input   %d generated rows of %d sensors from t = %d ms, events up to %d ms out of order, 1 bad row in ~%d, streamed through a pipe\n",
		g.Rows, g.Sensors, g.StartMS, g.JitterMS, g.BadEvery)
	fmt.Printf("config  %d ms windows, v' = v × %g + %g, %s\n", cfg.WindowMS, cfg.Scale, cfg.Offset, mode)
	fmt.Printf("result  %d lines, %d rows, %d rejected (%d late), %d sensors, %d windows in %v: %.2fM rows/s\n\n",
		st.Lines, st.Rows, st.Rejected, st.Late, st.Sensors, st.Windows, elapsed.Round(time.Millisecond),
		float64(st.Rows)/elapsed.Seconds()/1e6)
	fmt.Printf("output (first %d of %d lines):\n%s", len(out.lines), out.n, indent(out.lines))
	fmt.Printf("\nstderr (first %d of %d lines):\n%s", len(rej.lines), rej.n, indent(rej.lines))
	fmt.Printf("\nGive a FILE (or - for stdin) for the whole CSV on stdout; -lateness-ms L streams windows as they close.\n")
	return nil
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

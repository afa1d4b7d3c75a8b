// Command wordcount is ringactor's streaming word count: a keyed, windowed,
// fan-out/fan-in job on package stream, in one file.
//
//	lines ─▶ split ×2 ─KeyBy(word)─▶ count ×4 (sliding windows) ─▶ top ─▶ stdout
//	                                       └─ late words ─▶ late
//
// A generated stream of timestamped lines (events up to -jitter-ms out of
// order) is split into words by two parallel instances, partitioned by word
// across four window instances that count each word in sliding windows of
// -window-ms every -slide-ms, and merged (fan-in) into one stage that prints
// each window's most frequent words once the watermark has closed it. Words
// later than -lateness-ms go to a side output and are counted.
//
// Usage:
//
//	go run ./examples/wordcount [-lines N] [-window-ms W] [-slide-ms S] [-lateness-ms L] [-jitter-ms J] [-top K]
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/stream"
)

// Line is one input event: text at an event time in milliseconds.
type Line struct {
	TS   int64
	Text string
}

// Word is one word of a line, with the line's time.
type Word struct {
	TS int64
	W  string
}

// Count is one word's count in one window.
type Count struct {
	Window stream.Span
	Word   string
	N      int
}

func init() {
	messages.MustRegister[Line]("ringactor.examples.wordcount.Line")
	messages.MustRegister[Word]("ringactor.examples.wordcount.Word")
	messages.MustRegister[Count]("ringactor.examples.wordcount.Count")
}

// Config is a run's parameters.
type Config struct {
	Lines                int
	WindowMS, SlideMS    int64
	LatenessMS, JitterMS int64
	Top                  int
	Seed                 uint64
}

// Result is what a run counted.
type Result struct {
	Counted int64 // words counted in windows (a word counts in each of its windows)
	Late    int64 // words whose every window had closed: the side output
	Windows int   // windows printed
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses the command line, runs the job and returns the exit status
// (ringactor's rules: 0, and -h prints the usage; 2 for a bad command line,
// reported in one line and a hint; 1 for a failure).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := Config{Seed: 1}
	fs := flag.NewFlagSet("wordcount", flag.ContinueOnError)
	fs.IntVar(&cfg.Lines, "lines", 20_000, "generated lines `N` (at least 0)")
	fs.Int64Var(&cfg.WindowMS, "window-ms", 1000, "sliding window width `W` (at least 1)")
	fs.Int64Var(&cfg.SlideMS, "slide-ms", 500, "sliding window step `S` (1 to W)")
	fs.Int64Var(&cfg.LatenessMS, "lateness-ms", 200, "allowed out-of-orderness `L` (at least 0)")
	fs.Int64Var(&cfg.JitterMS, "jitter-ms", 800, "events up to `J` ms out of order (at least 0)")
	fs.IntVar(&cfg.Top, "top", 3, "print the `K` most frequent words of each window (at least 1)")
	fs.SetOutput(io.Discard) // -h prints the usage below; a mistake is one line
	var err error
	switch err = fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stderr, usage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return 0
	case err == nil && fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case err == nil:
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "wordcount: %v\nRun 'wordcount -h' for usage.\n", err)
		return 2
	}
	res, err := Run(ctx, cfg, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "wordcount: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d word counts in %d windows, %d late words (side output)\n", res.Counted, res.Windows, res.Late)
	return 0
}

// usage is what -h prints before the flags.
const usage = `Usage: wordcount [-lines N] [-window-ms W] [-slide-ms S] [-lateness-ms L] [-jitter-ms J] [-top K]

Count the words of generated lines in sliding windows on a stream graph and
print each window's most frequent words.

Flags:
`

// Validate says what is wrong with c, or nil.
func (c Config) Validate() error {
	switch {
	case c.Lines < 0:
		return fmt.Errorf("-lines must be at least 0, got %d", c.Lines)
	case c.WindowMS < 1:
		return fmt.Errorf("-window-ms must be at least 1, got %d", c.WindowMS)
	case c.SlideMS < 1 || c.SlideMS > c.WindowMS:
		return fmt.Errorf("-slide-ms must be 1 to -window-ms (%d), got %d", c.WindowMS, c.SlideMS)
	case c.LatenessMS < 0:
		return fmt.Errorf("-lateness-ms must be at least 0, got %d", c.LatenessMS)
	case c.JitterMS < 0:
		return fmt.Errorf("-jitter-ms must be at least 0, got %d", c.JitterMS)
	case c.Top < 1:
		return fmt.Errorf("-top must be at least 1, got %d", c.Top)
	}
	return nil
}

// vocabulary is what the generated lines say.
var vocabulary = strings.Fields("ring kernel actor stream window watermark emit key state timer drain sink source graph")

// Generate makes n lines, 10 ms apart from t = 0, each shifted back by up to
// jitter ms, of 1–8 words drawn with a skew (early words more often).
func Generate(n int, jitter int64, seed uint64) []Line {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]Line, n)
	for i := range out {
		words := make([]string, 1+rng.IntN(8))
		for j := range words {
			words[j] = vocabulary[min(rng.IntN(len(vocabulary)), rng.IntN(len(vocabulary)))]
		}
		out[i] = Line{TS: int64(i)*10 - rng.Int64N(jitter+1), Text: strings.Join(words, " ")}
	}
	return out
}

// Run streams the generated lines through the graph and writes each
// closed window's top words to w.
func Run(ctx context.Context, cfg Config, w io.Writer) (Result, error) {
	var res Result
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	g := stream.New(stream.WithRuntimeOptions(actors.WithLogger(actors.DiscardLogger())))
	defer g.Stop(context.WithoutCancel(ctx))

	lines := stream.NewSource[Line](g, "lines").EventTime(func(l Line) int64 { return l.TS }, cfg.LatenessMS)
	split := stream.FlatMap(g, "split", func(l Line, out *stream.Emitter[Word]) error {
		for word := range strings.FieldsSeq(l.Text) {
			out.Emit(Word{TS: l.TS, W: word})
		}
		return nil
	}, stream.Parallelism(2))
	count, late := stream.Window(g, "count", stream.WindowSpec[Word, string, int, Count]{
		Size: cfg.WindowMS, Slide: cfg.SlideMS,
		Time:   func(w Word) int64 { return w.TS },
		Key:    func(w Word) string { return w.W },
		Add:    func(n *int, _ Word) { *n++ },
		Result: func(word string, s stream.Span, n *int) Count { return Count{Window: s, Word: word, N: *n} },
	}, stream.Parallelism(4))
	// top gathers the counts of each window from the four instances (a
	// fan-in whose watermark is their minimum) and prints a window once the
	// watermark has passed its end: every instance has closed it by then.
	top := stream.NewStage(g, "top", func() stream.Funcs[Count, struct{}] {
		byWindow := stream.NewKeyedState[stream.Span, []Count]()
		flush := func(wm int64) {
			var ends []stream.Span
			for s := range byWindow.All() {
				if s.End <= wm {
					ends = append(ends, s)
				}
			}
			slices.SortFunc(ends, func(a, b stream.Span) int { return cmp.Compare(a.Start, b.Start) })
			for _, s := range ends {
				cs := *byWindow.Get(s)
				slices.SortFunc(cs, func(a, b Count) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Word, b.Word)) })
				fmt.Fprintf(w, "[%6d, %6d)", s.Start, s.End)
				for _, c := range cs[:min(cfg.Top, len(cs))] {
					fmt.Fprintf(w, " %s=%d", c.Word, c.N)
				}
				fmt.Fprintln(w)
				byWindow.Delete(s)
				res.Windows++
			}
		}
		return stream.Funcs[Count, struct{}]{
			Element: func(_ *stream.Context, c Count, _ *stream.Emitter[struct{}]) error {
				st := byWindow.Get(c.Window)
				*st = append(*st, c)
				res.Counted += int64(c.N)
				return nil
			},
			Watermark: func(_ *stream.Context, wm int64, _ *stream.Emitter[struct{}]) error {
				flush(wm)
				return nil
			},
		}
	})
	lateCount := stream.ToFunc(g, "late", func(context.Context, stream.Late[Word]) error {
		res.Late++
		return nil
	})
	if err := g.Err(); err != nil {
		return res, err
	}
	for _, err := range []error{
		stream.Connect(lines, split),
		stream.Connect(split, count, stream.KeyBy(func(w Word) string { return w.W })),
		stream.Connect(count, top),
		stream.Connect(late, lateCount),
	} {
		if err != nil {
			return res, err
		}
	}
	if err := g.Start(ctx); err != nil {
		return res, err
	}
	in := Generate(cfg.Lines, cfg.JitterMS, cfg.Seed)
	for i := 0; i < len(in); i += 64 {
		if err := lines.SendAll(ctx, in[i:min(i+64, len(in))]...); err != nil {
			return res, err
		}
	}
	if err := g.Drain(ctx); err != nil {
		return res, err
	}
	// Words counted in sliding windows are counted once per window.
	return res, g.Err()
}

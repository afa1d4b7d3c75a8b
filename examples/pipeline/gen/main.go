// Command gen writes a seeded synthetic sensor CSV input for the pipeline
// example and its benchmark (bench/pipeline.sh):
//
//	go run ./examples/pipeline/gen -rows 5000000 > /tmp/sensors.csv
//
// The same flags always give the same bytes. See sensor.Synthetic for what
// the rows look like. It follows ringactor's command-line rules: -h exits
// 0, a bad command line exits 2, a failure 1.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ringactor/ringactor/stream/sensor"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run parses the command line, writes the input and returns the exit
// status: 0 (and -h prints the usage); 2 for a bad command line, reported
// in one line and a hint; 1 for a failure.
func run(args []string, stdout, stderr io.Writer) int {
	g := sensor.DefaultSynthetic()
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.IntVar(&g.Rows, "rows", g.Rows, "rows to write, malformed ones included (at least 0)")
	fs.IntVar(&g.Sensors, "sensors", 64, "distinct sensors (at least 1)")
	fs.Uint64Var(&g.Seed, "seed", g.Seed, "random seed")
	fs.Int64Var(&g.StartMS, "start-ms", g.StartMS, "timestamp of the first row")
	fs.Int64Var(&g.StepMS, "step-ms", g.StepMS, "timestamp advance per row (at least 0)")
	fs.Int64Var(&g.JitterMS, "jitter-ms", g.JitterMS, "events are shifted back by up to this much: out of order (at least 0)")
	fs.IntVar(&g.BadEvery, "bad-every", 100_000, "one malformed row in about this many (0: none)")
	fs.BoolVar(&g.Header, "header", g.Header, "begin with the header line")
	out := fs.String("o", "", "output `file` (default stdout)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: gen [flags]\n\nWrite a seeded synthetic sensor CSV input; the same flags give the same bytes.\n\nFlags:")
		fs.PrintDefaults()
	}
	fs.SetOutput(io.Discard) // only -h prints the usage; a mistake is one line
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		fs.Usage()
		return 0
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err == nil {
		err = g.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "gen: %s\nRun 'gen -h' for usage.\n", strings.TrimPrefix(err.Error(), "sensor: synthetic input: "))
		return 2
	}
	if err := write(*out, g, stdout); err != nil {
		fmt.Fprintf(stderr, "gen: %v\n", err)
		return 1
	}
	return 0
}

// write writes the input g describes to the file named out, or to stdout.
func write(out string, g sensor.Synthetic, stdout io.Writer) error {
	w := stdout
	var f *os.File
	if out != "" {
		var err error
		if f, err = os.Create(out); err != nil {
			return err
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	err := sensor.Generate(bw, g)
	if err == nil {
		err = bw.Flush()
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

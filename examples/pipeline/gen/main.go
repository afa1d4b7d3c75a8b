// Command gen writes a seeded synthetic sensor CSV input for the pipeline
// example and its benchmark (bench/pipeline.sh):
//
//	go run ./examples/pipeline/gen -rows 5000000 > /tmp/sensors.csv
//
// The same flags always give the same bytes. See sensor.Synthetic for what
// the rows look like.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/ringactor/ringactor/examples/pipeline/sensor"
)

func main() {
	g := sensor.DefaultSynthetic()
	flag.IntVar(&g.Rows, "rows", g.Rows, "rows to write (malformed ones included)")
	flag.IntVar(&g.Sensors, "sensors", 64, "distinct sensors")
	flag.Uint64Var(&g.Seed, "seed", g.Seed, "random seed")
	flag.Int64Var(&g.StartMS, "start-ms", g.StartMS, "timestamp of the first row")
	flag.Int64Var(&g.StepMS, "step-ms", g.StepMS, "timestamp advance per row")
	flag.Int64Var(&g.JitterMS, "jitter-ms", g.JitterMS, "events are shifted back by up to this much: out of order")
	flag.IntVar(&g.BadEvery, "bad-every", 100_000, "one malformed row in about this many (0: none)")
	flag.BoolVar(&g.Header, "header", g.Header, "begin with the header line")
	out := flag.String("o", "", "output `file` (default stdout)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "gen: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := run(*out, g); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// run writes the input g describes to the file named out, or to stdout.
func run(out string, g sensor.Synthetic) error {
	w := os.Stdout
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	err := sensor.Generate(bw, g)
	if err == nil {
		err = bw.Flush()
	}
	if w != os.Stdout {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

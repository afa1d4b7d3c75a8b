// Command pagerank computes PageRank with ring-kernel actors: one partition
// kernel per core, exchanging their contributions kernel-to-kernel, and a
// coordinator kernel that decides when to stop (see package
// github.com/ringactor/ringactor/pagerank).
//
// Usage:
//
//	go run ./examples/pagerank [-top K] [FILE]
//
// With no FILE it ranks the embedded Zachary's karate club graph. FILE is an
// edge list: one directed edge "src dst" a line, '#' comments and blank
// lines ignored. It prints the top K nodes (default 10) as node<TAB>rank,
// highest first, then the number of iterations and the time.
//
// The same computation, with every option, is `ringactor pagerank`. It
// follows ringactor's command-line rules: -h exits 0, a bad command line
// 2, a failure 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ringactor/ringactor/pagerank"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli parses the command line, ranks the graph and returns the exit status
// by ringactor's rules: 0 (and -h prints the usage); 2 for a bad command
// line, reported in one line and a hint; 1 for a failure.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pagerank", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad command line is reported below, in one line
	top := fs.Int("top", 10, "print the `K` best nodes (0: all)")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stderr, "Usage: pagerank [-top K] [FILE]\n\nRank the nodes of an edge list (default: the embedded karate club graph).\n\nFlags:\n")
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return 0
	case err != nil: // a bad flag or value: reported below
	case fs.NArg() > 1:
		err = fmt.Errorf("want at most one FILE, got %q", fs.Args())
	case *top < 0:
		err = fmt.Errorf("-top must be at least 0, got %d", *top)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pagerank: %v\nRun 'pagerank -h' for usage.\n", err)
		return 2
	}
	if err := run(ctx, fs.Arg(0), *top, stdout); err != nil {
		// The package's errors start with its name, which is the program's.
		fmt.Fprintf(stderr, "pagerank: %s\n", strings.TrimPrefix(err.Error(), "pagerank: "))
		return 1
	}
	return 0
}

// run ranks the graph in file (the karate club if empty) and prints the top
// nodes, the iterations and the time.
func run(ctx context.Context, file string, top int, stdout io.Writer) error {
	g, name := pagerank.KarateClub(), "Zachary's karate club (embedded)"
	if file != "" {
		var err error
		if g, err = pagerank.ParseFile(file); err != nil {
			return err
		}
		name = file
	}
	start := time.Now()
	res, err := pagerank.Run(ctx, g, pagerank.Options{})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# %s: %d nodes, %d edges, %d partition kernels\n", name, g.NumNodes(), g.NumEdges(), res.Partitions)
	for _, r := range pagerank.Top(g, res.Ranks, top) {
		fmt.Fprintf(stdout, "%s\t%.6f\n", r.Name, r.Rank)
	}
	fmt.Fprintf(stdout, "# converged after %d iterations in %v (%v with the runtime's start and stop)\n",
		res.Iterations, res.Duration.Round(time.Microsecond), time.Since(start).Round(time.Microsecond))
	return nil
}

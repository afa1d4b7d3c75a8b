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
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ringactor/ringactor/internal/excli"
	"github.com/ringactor/ringactor/pagerank"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli parses the command line, ranks the graph and returns the exit status
// by ringactor's rules: 0; 1 for a failure; 2 for a bad command line.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pagerank", flag.ContinueOnError)
	top := fs.Int("top", 10, "print the `K` best nodes (0: all)")
	if code, ok := excli.Parse(fs, "[-top K] [FILE]", "Rank the nodes of an edge list (default: the embedded karate club graph).", args, stderr); !ok {
		return code
	}
	switch {
	case fs.NArg() > 1:
		return excli.UsageError(stderr, fs.Name(), "want at most one FILE, got %q", fs.Args())
	case *top < 0:
		return excli.UsageError(stderr, fs.Name(), "-top must be at least 0, got %d", *top)
	}
	if err := run(ctx, fs.Arg(0), *top, stdout); err != nil {
		return excli.Fail(stderr, fs.Name(), err)
	}
	return excli.ExitOK
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

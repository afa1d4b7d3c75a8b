// Command pagerank computes PageRank with ring-kernel actors: one partition
// kernel per core, exchanging their contributions kernel-to-kernel, and a
// coordinator kernel that decides when to stop (see package
// github.com/ringactor/ringactor/examples/pagerank/pagerank).
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
// The same computation, with every option, is `ringactor pagerank`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/ringactor/ringactor/examples/pagerank/pagerank"
)

func main() {
	top := flag.Int("top", 10, "print the `K` best nodes (0: all)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: go run ./examples/pagerank [-top K] [FILE]\n\n"+
			"Rank the nodes of an edge list (default: the embedded karate club graph).\n\nFlags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 1 || *top < 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, flag.Arg(0), *top); err != nil {
		fmt.Fprintln(os.Stderr, err)
		stop()
		os.Exit(1)
	}
}

// run ranks the graph in file (the karate club if empty) and prints the top
// nodes, the iterations and the time.
func run(ctx context.Context, file string, top int) error {
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
	fmt.Printf("# %s: %d nodes, %d edges, %d partition kernels\n", name, g.NumNodes(), g.NumEdges(), res.Partitions)
	for _, r := range pagerank.Top(g, res.Ranks, top) {
		fmt.Printf("%s\t%.6f\n", r.Name, r.Rank)
	}
	fmt.Printf("# converged after %d iterations in %v (%v with the runtime's start and stop)\n",
		res.Iterations, res.Duration.Round(time.Microsecond), time.Since(start).Round(time.Microsecond))
	return nil
}

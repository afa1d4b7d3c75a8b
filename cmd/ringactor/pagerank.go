package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/ringactor/ringactor/pagerank"
)

// Help text of the pagerank command.
const (
	pagerankSynopsis    = "[--edges FILE | FILE | -] [--damping D] [--tol T | --tol-abs T] [--max-iter N] [--partitions P] [--top K] [--progress] [--timings]"
	pagerankDescription = `Compute the PageRank of a directed graph with ring kernels: the nodes are
split across P partition kernels (one per core by default) that send their
contributions to one another kernel-to-kernel each iteration, and a
coordinator kernel sums the dangling mass and the L1 change and stops the
iteration (see package github.com/ringactor/ringactor/pagerank).

The semantics are networkx's pagerank: dangling nodes spread their rank
over all nodes, duplicate edges count once, self-loops are ordinary edges,
the ranks sum to 1, and the iteration stops once the L1 change is below
N x tol, or fails after --max-iter iterations.

That rule (networkx's, the default) loosens with the number of nodes N: at
the default tol on a graph of millions of nodes one iteration meets it.
--tol-abs T stops instead once the L1 change is below T, whatever N; the
ranks are then within D/(1-D) x T of the exact PageRank in L1 (5.67 x T at
damping 0.85). Give --tol or --tol-abs, not both. The summary line says how
many iterations were made, the last L1 change and the bound it went below.

The input, --edges FILE or FILE (- for stdin), is an edge list: one
directed edge "src dst" a line, the node ids (any strings without
whitespace) separated by spaces or tabs; '#' starts a comment, blank lines
are ignored, a leading UTF-8 byte order mark is skipped. Malformed lines are
reported by number and nothing is computed. Without an input, the embedded
Zachary's karate club graph is ranked. Flags may come before or after FILE.

Output: node<TAB>rank a line on stdout, highest rank first (ties in input
order); a summary line on stderr. With --progress, or when stderr is a
terminal, a line per iteration on stderr. With --timings, a line on stderr
with the time of each phase: read (the file into memory), parse (scan it,
number the nodes), build (the in-edge CSR), setup (the runtime, the ring
kernels and their partitions' layouts), iterate, write (rank and print).
`
)

// pagerankCommand is the "pagerank" subcommand.
var pagerankCommand = command{
	name:    "pagerank",
	summary: "rank the nodes of an edge list with partitioned PageRank ring kernels",
	run:     runPagerankCommand,
}

// pagerankStdin is what pagerank reads for --edges -; tests replace it.
var pagerankStdin io.Reader = os.Stdin

// pagerankConfig is the pagerank command's parsed command line.
type pagerankConfig struct {
	edges    string // "" for the embedded graph, "-" for stdin
	opts     pagerank.Options
	top      int
	progress bool
	timings  bool
}

// runPagerankCommand parses the pagerank command's flags and runs it.
func runPagerankCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("pagerank", pagerankSynopsis, pagerankDescription, stderr)
	var cfg pagerankConfig
	fs.StringVar(&cfg.edges, "edges", "", "edge list `FILE`, - for stdin (default: the embedded karate club graph)")
	fs.Float64Var(&cfg.opts.Damping, "damping", pagerank.DefaultDamping, "damping factor `D`, the probability of following a link, in (0, 1]")
	fs.Float64Var(&cfg.opts.Tol, "tol", pagerank.DefaultTol, "convergence tolerance `T` per node: stop when the L1 change < N x T")
	fs.Float64Var(&cfg.opts.TolAbs, "tol-abs", 0, "absolute convergence tolerance `T`: stop when the L1 change < T, whatever N (instead of --tol)")
	fs.IntVar(&cfg.opts.MaxIter, "max-iter", pagerank.DefaultMaxIter, "fail after `N` iterations without convergence")
	fs.IntVar(&cfg.opts.Partitions, "partitions", 0, "`P` partition kernels (0: one per core)")
	fs.IntVar(&cfg.top, "top", 0, "print only the `K` highest ranked nodes (0: all)")
	fs.BoolVar(&cfg.progress, "progress", false, "print a progress line per iteration on stderr (the default when stderr is a terminal)")
	fs.BoolVar(&cfg.timings, "timings", false, "print the time of each phase (read, parse, build, setup, iterate, write) on stderr")
	files, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	switch {
	case len(files) > 1:
		return usageError(fs, "want at most one FILE, got %q", files)
	case len(files) == 1 && cfg.edges != "":
		return usageError(fs, "give --edges FILE or FILE, not both")
	case len(files) == 1:
		if files[0] == "" {
			return usageError(fs, "FILE is empty")
		}
		cfg.edges = files[0]
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch d, t, ta := cfg.opts.Damping, cfg.opts.Tol, cfg.opts.TolAbs; {
	case !(d > 0 && d <= 1):
		return usageError(fs, "--damping must be in (0, 1], got %v", d)
	case given["tol"] && given["tol-abs"]:
		return usageError(fs, "give --tol or --tol-abs, not both")
	case given["tol-abs"] && (!(ta > 0) || math.IsInf(ta, 1)):
		return usageError(fs, "--tol-abs must be a positive number, got %v", ta)
	case !given["tol-abs"] && (!(t > 0) || math.IsInf(t, 1)):
		return usageError(fs, "--tol must be a positive number, got %v", t)
	case cfg.opts.MaxIter < 1:
		return usageError(fs, "--max-iter must be at least 1, got %d", cfg.opts.MaxIter)
	case cfg.opts.Partitions < 0:
		return usageError(fs, "--partitions must be at least 0, got %d", cfg.opts.Partitions)
	case cfg.top < 0:
		return usageError(fs, "--top must be at least 0, got %d", cfg.top)
	}
	if given["tol-abs"] {
		cfg.opts.Tol = 0 // the absolute rule replaces networkx's
	}
	cfg.progress = cfg.progress || isTerminal(stderr)
	if err := runPagerank(ctx, stdout, stderr, cfg); err != nil {
		return failure(stderr, "pagerank", err)
	}
	return exitOK
}

// runPagerank reads the graph, ranks it and writes the ranking to stdout
// and the summary (and progress) to stderr. Nothing goes to stdout unless
// the computation succeeds.
func runPagerank(ctx context.Context, stdout, stderr io.Writer, cfg pagerankConfig) error {
	start := time.Now()
	g, name := pagerank.KarateClub(), "Zachary's karate club (embedded)"
	var pt pagerank.ParseTimings
	if cfg.edges != "" {
		var err error
		name = cfg.edges
		if cfg.edges == "-" {
			name = "stdin"
			g, pt, err = pagerank.ParseTimed(pagerankStdin)
			if pe, ok := errors.AsType[*pagerank.ParseError](err); ok {
				pe.Name = name
			}
		} else {
			g, pt, err = pagerank.ParseFileTimed(cfg.edges)
		}
		if err != nil {
			return err
		}
		if g.NumNodes() == 0 {
			return fmt.Errorf("%s: no edges", name)
		}
	}
	parsed := time.Since(start)
	if cfg.progress {
		cfg.opts.Progress = func(p pagerank.Progress) {
			fmt.Fprintf(stderr, "iteration %d: L1 change %.3e (%v)\n", p.Iteration, p.Delta, p.Elapsed.Round(time.Microsecond))
		}
	}
	res, err := pagerank.Run(ctx, g, cfg.opts)
	if err != nil {
		return err
	}

	writeStart := time.Now()
	if err := writeRanks(stdout, pagerank.Top(g, res.Ranks, cfg.top)); err != nil {
		return err
	}
	written := time.Since(writeStart)
	rule := fmt.Sprintf("N x tol, tol %g", cfg.opts.Tol)
	if cfg.opts.TolAbs > 0 {
		rule = "--tol-abs"
	}
	fmt.Fprintf(stderr, "%s: %s, %s, %s: converged after %s in %v (read in %v); last L1 change %.3g < %.3g (%s)\n",
		name, plural(int64(g.NumNodes()), "node"), plural(int64(g.NumEdges()), "edge"), plural(int64(res.Partitions), "partition kernel"), plural(int64(res.Iterations), "iteration"),
		res.Duration.Round(time.Microsecond), parsed.Round(time.Microsecond), res.Delta, res.Limit, rule)
	if cfg.timings {
		ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }
		fmt.Fprintf(stderr, "timings (ms): read %s parse %s build %s setup %s iterate %s write %s total %s\n",
			ms(pt.Read), ms(pt.Parse), ms(pt.Build), ms(res.Duration-res.Iterating), ms(res.Iterating), ms(written), ms(time.Since(start)))
	}
	return nil
}

// writeRanks writes node<TAB>rank lines through one buffer, each rank
// formatted into a reused byte slice (no allocation per line).
func writeRanks(stdout io.Writer, ranked []pagerank.Ranked) error {
	w := bufio.NewWriterSize(stdout, 256<<10)
	buf := make([]byte, 0, 64)
	for _, r := range ranked {
		buf = append(buf[:0], r.Name...)
		buf = append(buf, '\t')
		buf = strconv.AppendFloat(buf, r.Rank, 'g', -1, 64)
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return w.Flush()
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

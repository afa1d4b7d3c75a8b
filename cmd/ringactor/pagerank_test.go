package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runPagerankCLI runs the pagerank command with args and returns its status,
// stdout and stderr.
func runPagerankCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runPagerankCommand(testCtx(t), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// writeEdges writes an edge list into a temporary file and returns its path.
func writeEdges(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.edges")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPagerankEmbedded ranks the embedded karate club: every node, highest
// first, as node<TAB>rank with ranks that parse back and sum to 1.
func TestPagerankEmbedded(t *testing.T) {
	code, out, errOut := runPagerankCLI(t)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 34 {
		t.Fatalf("%d lines, want 34:\n%s", len(lines), out)
	}
	sum, prev := 0.0, 1.0
	for _, l := range lines {
		name, rank, ok := strings.Cut(l, "\t")
		r, err := strconv.ParseFloat(rank, 64)
		if !ok || err != nil || name == "" || r > prev {
			t.Fatalf("line %q", l)
		}
		sum, prev = sum+r, r
	}
	if sum < 1-1e-12 || sum > 1+1e-12 {
		t.Errorf("ranks sum to %v", sum)
	}
	if !strings.HasPrefix(lines[0], "33\t0.1009") || !strings.HasPrefix(lines[1], "0\t0.0970") {
		t.Errorf("top two %q", lines[:2])
	}
	if !strings.Contains(errOut, "karate club") || !strings.Contains(errOut, "converged after 21 iterations") {
		t.Errorf("summary %q", errOut)
	}
	if strings.Contains(errOut, "iteration 1:") {
		t.Errorf("progress without --progress on a non-terminal: %q", errOut)
	}
}

// TestPagerankFile ranks a file with every option, and prints a progress
// line per iteration on stderr.
func TestPagerankFile(t *testing.T) {
	// tail keeps what it gets: a self-loop is its only out-edge.
	path := writeEdges(t, "# a star with a tail\nhub a\nhub b\nhub c\na hub\nb hub\nc hub\nc tail\ntail tail\n")
	code, out, errOut := runPagerankCLI(t, "--edges", path, "--damping", "0.9", "--tol", "1e-10",
		"--max-iter", "500", "--partitions", "3", "--top", "2", "--progress")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "tail\t0.55") || !strings.HasPrefix(lines[1], "hub\t0.19") {
		t.Fatalf("stdout %q", out)
	}
	progress := 0
	for l := range strings.Lines(errOut) {
		if strings.HasPrefix(l, "iteration ") {
			progress++
		}
	}
	if progress < 2 || !strings.Contains(errOut, "iteration 1: L1 change ") ||
		!strings.Contains(errOut, "converged after "+strconv.Itoa(progress)+" iterations") {
		t.Errorf("%d progress lines, stderr:\n%s", progress, errOut)
	}
	if !strings.Contains(errOut, "5 nodes, 8 edges, 3 partition kernels") {
		t.Errorf("summary:\n%s", errOut)
	}
}

// TestPagerankFailures: malformed input, no convergence, a missing or an
// empty file fail with status 1 and print nothing on stdout.
func TestPagerankFailures(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"malformed", []string{"--edges", writeEdges(t, "a b\nnope\nb c\nx y z\n")},
			[]string{"2 malformed lines", "line 2: 1 field,", "line 4: 3 fields"}},
		{"not converged", []string{"--max-iter", "3"}, []string{"failed to converge within 3 iterations"}},
		{"missing", []string{"--edges", filepath.Join(t.TempDir(), "absent")}, []string{"no such file"}},
		{"empty", []string{"--edges", writeEdges(t, "# nothing\n\n")}, []string{"no edges"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runPagerankCLI(t, c.args...)
			if code != exitFailure || out != "" {
				t.Fatalf("exit %d, stdout %q", code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

// TestPagerankUsage: bad flag values are usage errors; -h is help.
func TestPagerankUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--damping", "0"}, {"--damping", "1.5"}, {"--tol", "0"}, {"--tol", "-1"}, {"--max-iter", "0"},
		{"--partitions", "-1"}, {"--top", "-3"}, {"--nope"}, {"a", "b"}, {"--damping", "x"},
		{"--edges", "a", "b"}, {""},
		{"--tol-abs", "0"}, {"--tol-abs", "-1e-10"}, {"--tol-abs", "NaN"}, {"--tol-abs", "inf"},
		{"--tol", "1e-6", "--tol-abs", "1e-10"}, {"--tol-abs", "1e-10", "--tol", "1e-6"},
	} {
		code, out, errOut := runPagerankCLI(t, args...)
		if code != exitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		checkUsageLine(t, args, "pagerank", errOut)
	}
	code, out, errOut := runPagerankCLI(t, "-h")
	if code != exitOK || out != "" || !strings.Contains(errOut, "--max-iter") || !strings.Contains(errOut, "node<TAB>rank") {
		t.Errorf("-h: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestPagerankInputs reads the edge list as a positional FILE, from stdin
// with --edges - or -, with flags on either side, and skips a leading byte
// order mark.
func TestPagerankInputs(t *testing.T) {
	const edges = "\uFEFFhub a\nhub b\na hub\nb hub\n"
	path := writeEdges(t, edges)
	for _, args := range [][]string{
		{path}, {"--top", "1", path}, {path, "--top", "1"}, {"--edges", path},
		{"--edges", "-"}, {"-"}, {"--top", "1", "-"},
	} {
		old := pagerankStdin
		pagerankStdin = strings.NewReader(edges)
		code, out, errOut := runPagerankCLI(t, args...)
		pagerankStdin = old
		if code != exitOK || !strings.HasPrefix(out, "hub\t0.4") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		if strings.Contains(out, "\uFEFF") {
			t.Errorf("%q: the byte order mark is in a node id: %q", args, out)
		}
	}
	old := pagerankStdin
	pagerankStdin = strings.NewReader("a b\nbad line here\n")
	code, _, errOut := runPagerankCLI(t, "-")
	pagerankStdin = old
	if code != exitFailure || !strings.HasPrefix(errOut, "ringactor pagerank: stdin: 1 malformed line") {
		t.Errorf("malformed stdin: exit %d, stderr %q", code, errOut)
	}
}

// TestPagerankTimings: --timings adds one stderr line with every phase, each
// a non-negative number of milliseconds, and changes nothing on stdout.
func TestPagerankTimings(t *testing.T) {
	path := writeEdges(t, "1 2\n2 3\n3 1\n3 4\n")
	code, plain, _ := runPagerankCLI(t, path)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	code, out, errOut := runPagerankCLI(t, path, "--timings")
	if code != exitOK || out != plain {
		t.Fatalf("exit %d, stdout %q, want %q", code, out, plain)
	}
	var line string
	for l := range strings.Lines(errOut) {
		if rest, ok := strings.CutPrefix(l, "timings (ms): "); ok {
			line = strings.TrimSpace(rest)
		}
	}
	f := strings.Fields(line)
	want := []string{"read", "parse", "build", "setup", "iterate", "write", "total"}
	if len(f) != 2*len(want) {
		t.Fatalf("timings line %q", line)
	}
	for i, name := range want {
		v, err := strconv.ParseFloat(f[2*i+1], 64)
		if f[2*i] != name || err != nil || v < 0 {
			t.Errorf("phase %d: %q %q, want %s and a number of ms", i, f[2*i], f[2*i+1], name)
		}
	}
	if _, _, errOut := runPagerankCLI(t, path); strings.Contains(errOut, "timings") {
		t.Errorf("timings without --timings: %q", errOut)
	}
}

// TestPagerankTolAbs: --tol-abs stops on an absolute L1 change, whatever
// the number of nodes, after more iterations than networkx's rule on the
// karate club (21); the summary names the rule and the bound, and the flag
// may follow FILE.
func TestPagerankTolAbs(t *testing.T) {
	code, _, errOut := runPagerankCLI(t)
	if code != exitOK || !strings.Contains(errOut, "converged after 21 iterations") ||
		!strings.Contains(errOut, " < 3.4e-05 (N x tol, tol 1e-06)") {
		t.Fatalf("defaults: exit %d, summary %q", code, errOut)
	}
	path := writeEdges(t, "a b\nb c\nc a\nc d\n")
	code, out, errOut := runPagerankCLI(t, path, "--tol-abs", "1e-12", "--max-iter", "1000")
	if code != exitOK || strings.Count(out, "\n") != 4 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, after, ok := strings.Cut(errOut, "converged after ")
	n, err := strconv.Atoi(strings.Fields(after + " x")[0])
	if !ok || err != nil || n <= 21 || !strings.Contains(errOut, " < 1e-12 (--tol-abs)") {
		t.Errorf("--tol-abs 1e-12: summary %q", errOut)
	}
	// The same bound through networkx's rule (N x tol = 4 x 2.5e-13) makes
	// the same iterations.
	code, _, errOut2 := runPagerankCLI(t, path, "--tol", "2.5e-13", "--max-iter", "1000")
	if code != exitOK || !strings.Contains(errOut2, "converged after "+strconv.Itoa(n)+" iterations") {
		t.Errorf("--tol 2.5e-13: exit %d, summary %q, want %d iterations", code, errOut2, n)
	}
}

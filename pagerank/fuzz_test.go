package pagerank

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// fuzzMaxInput caps what FuzzParse parses, so that one input stays cheap.
const fuzzMaxInput = 64 << 10

// naiveEdges is the edge-list grammar written as plainly as possible, the
// oracle FuzzParse checks the parsers against: the node names in the order
// of their first appearance, the distinct edges by name, and the numbers of
// the lines with other than 0 or 2 fields (with their field counts).
func naiveEdges(in string) (names []string, edges map[[2]string]bool, bad map[int]int) {
	in = strings.TrimPrefix(in, "\uFEFF")
	edges, bad = map[[2]string]bool{}, map[int]int{}
	seen := map[string]bool{}
	for n, line := range strings.Split(in, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.FieldsFunc(line, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
		switch len(f) {
		case 0:
			continue
		case 2:
			for _, name := range f {
				if !seen[name] {
					seen[name] = true
					names = append(names, name)
				}
			}
			edges[[2]string{f[0], f[1]}] = true
		default:
			bad[n+1] = len(f)
		}
	}
	return names, edges, bad
}

// edgesByName returns g's edges as (source name, target name) pairs, and
// fails t where the graph's own invariants do not hold: in-neighbours
// sorted, distinct and in range, out-degrees summing to the edge count.
func edgesByName(t *testing.T, g *Graph) map[[2]string]bool {
	t.Helper()
	n := g.NumNodes()
	out := make([]int, n)
	edges := map[[2]string]bool{}
	for v := range n {
		in := g.InNeighbors(v)
		for k, u := range in {
			if u < 0 || int(u) >= n {
				t.Fatalf("node %d has in-neighbour %d, outside [0, %d)", v, u, n)
			}
			if k > 0 && in[k-1] >= u {
				t.Fatalf("in-neighbours of node %d not strictly increasing: %v", v, in)
			}
			out[u]++
			edges[[2]string{g.Names[u], g.Names[v]}] = true
		}
	}
	for u := range n {
		if g.OutDegree(u) != out[u] {
			t.Fatalf("node %d: out-degree %d, but %d in-edges name it", u, g.OutDegree(u), out[u])
		}
	}
	if len(edges) != g.NumEdges() {
		t.Fatalf("%d distinct edges, NumEdges %d", len(edges), g.NumEdges())
	}
	return edges
}

// FuzzParse: whatever the bytes, Parse does not panic and agrees with the
// line parser, with and without parallel chunks; it builds a graph exactly
// when every line has 0 or 2 fields, with the oracle's nodes (in order of
// first appearance) and edges and a well-formed CSR; writing that graph out
// and parsing it again gives the same edges; a refused input is a
// *ParseError naming the malformed lines in order with their field counts;
// and the bytes allocated stay in proportion to the input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "\n", "1 2\n2 3\n3 1\n", "a b\r\nb c\r\n", "# c\n1\t2 # x\n", "\uFEFF1 2\n", "1 \uFEFF2\n",
		"1 2 3\n", "x\n", "1 2\n3", "0 00\n007 7\n", "99999999999999999999 1\n18446744073709551616 0\n",
		"65536 0\n", "67108864 1\n", "-1 +1\n", "1\v2\f\n", "1 2\r3 4\n", "\x00 é\n", "#\n#\n",
		strings.Repeat("x\n", MaxLineErrors+3), strings.Repeat("1 2\n", 50) + "5\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzMaxInput {
			data = data[:fuzzMaxInput]
		}
		in := string(data)
		checkAgainstLines(t, "input", in)

		// The scanner's tables are a few int32s a byte, the numeric-id
		// table at most 4 bytes per input byte or its 256 KiB floor. The
		// count is the process's: a measure over the bound is taken again
		// (twice at most), in case some other goroutine allocated meanwhile.
		var g *Graph
		var err error
		bound := uint64(64*len(data) + 4<<20)
		for try := 0; ; try++ {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			g, err = ParseBytes(data)
			runtime.ReadMemStats(&after)
			if got := after.TotalAlloc - before.TotalAlloc; got <= bound {
				break
			} else if try == 2 {
				t.Fatalf("parsing %d bytes allocated %d bytes, more than %d", len(data), got, bound)
			}
		}

		names, want, bad := naiveEdges(in)
		if len(bad) > 0 {
			pe, ok := errors.AsType[*ParseError](err)
			if !ok || g != nil {
				t.Fatalf("lines %v have other than 2 fields, but Parse gave %v, %v", bad, g, err)
			}
			if pe.Count != len(bad) || len(pe.Lines) != min(len(bad), MaxLineErrors) {
				t.Fatalf("%d malformed lines reported (%d listed), want %d", pe.Count, len(pe.Lines), len(bad))
			}
			for i, l := range pe.Lines {
				if i > 0 && pe.Lines[i-1].Line >= l.Line {
					t.Fatalf("malformed lines out of order: %v", pe.LineNumbers())
				}
				if bad[l.Line] != l.Fields {
					t.Fatalf("line %d reported with %d fields, it has %d", l.Line, l.Fields, bad[l.Line])
				}
			}
			if msg := pe.Error(); strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("the error is not one line: %q", msg)
			}
			return
		}
		if err != nil {
			t.Fatalf("every line has 0 or 2 fields, but Parse says %v", err)
		}
		if !slices.Equal(g.Names, names) {
			t.Fatalf("names %q, want %q", g.Names, names)
		}
		got := edgesByName(t, g)
		if len(got) != len(want) {
			t.Fatalf("%d edges, want %d", len(got), len(want))
		}
		for e := range want {
			if !got[e] {
				t.Fatalf("edge %q missing", e)
			}
		}

		// Round trip: the graph written as an edge list parses to the same
		// edges. (A comment first, so a name starting with U+FEFF is not
		// taken for a byte order mark.)
		var b strings.Builder
		b.WriteString("# round trip\n")
		for v := range g.NumNodes() {
			for _, u := range g.InNeighbors(v) {
				fmt.Fprintf(&b, "%s\t%s\n", g.Names[u], g.Names[v])
			}
		}
		h, err := ParseString(b.String())
		if err != nil {
			t.Fatalf("the graph written out does not parse: %v", err)
		}
		again := edgesByName(t, h)
		if len(again) != len(got) || h.NumNodes() != g.NumNodes() {
			t.Fatalf("round trip: %d nodes %d edges, want %d and %d", h.NumNodes(), len(again), g.NumNodes(), len(got))
		}
		for e := range got {
			if !again[e] {
				t.Fatalf("round trip lost edge %q", e)
			}
		}
	})
}

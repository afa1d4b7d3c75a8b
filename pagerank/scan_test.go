package pagerank

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sameGraph reports how g and h differ ("" if not at all).
func sameGraph(g, h *Graph) string {
	switch {
	case !slices.Equal(g.Names, h.Names):
		return fmt.Sprintf("names %q, want %q", g.Names, h.Names)
	case !slices.Equal(g.inOff, h.inOff) || !slices.Equal(g.inSrc, h.inSrc):
		return "in-edges differ"
	case !slices.Equal(g.outDeg, h.outDeg):
		return "out-degrees differ"
	}
	return ""
}

// checkAgainstLines parses in with the fast scanner split into k chunks
// and with the line parser, and fails unless both give the same graph or
// the same error.
func checkAgainstLines(t *testing.T, name, in string) {
	t.Helper()
	want, werr := parseLines(in)
	got, gerr := ParseString(in)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%s: error %v, the line parser says %v", name, gerr, werr)
	}
	if werr != nil {
		if got != nil {
			t.Fatalf("%s: a graph came back with the error", name)
		}
		return
	}
	if d := sameGraph(got, want); d != "" {
		t.Fatalf("%s: %s", name, d)
	}
	// The same in several chunks, however the cuts fall.
	body := strings.TrimPrefix(in, "\uFEFF")
	maxNum := min(max(len(body)/2, 1<<16), maxNumeric)
	for k := 2; k <= 7; k++ {
		chunks := scanChunks(body, maxNum, k)
		names, err := number(chunks, maxNum, len(body))
		if err != nil {
			t.Fatalf("%s, %d chunks: %v", name, k, err)
		}
		g, err := build(names, endsOf(chunks)...)
		if err != nil {
			t.Fatal(err)
		}
		if d := sameGraph(g, want); d != "" {
			t.Fatalf("%s, %d chunks: %s", name, k, d)
		}
	}
}

// TestScanHostile: inputs a careless scanner gets wrong parse exactly as the
// line parser does (the same graph, or the same malformed lines).
func TestScanHostile(t *testing.T) {
	mb := strings.Repeat("x", 1<<20)
	cases := map[string]string{
		"huge numbers":          "99999999999999999999999 1\n1 18446744073709551617\n4294967297 3\n999999999 1000000000\n",
		"overflow to small":     "18446744073709551616 0\n0 18446744073709551616\n", // 2^64 wraps to 0 if parsed carelessly
		"negative ids":          "-1 2\n2 -1\n-0 0\n+1 1\n",
		"leading zeros":         "0 00\n00 0\n01 1\n1 01\n",
		"the numeric limit":     fmt.Sprintf("%d %d\n%d 1\n", 1<<16, 1<<16+1, maxNumeric+1),
		"CRLF":                  "1 2\r\n2 3\r\n\r\n3 1\r\n",
		"CR alone":              "1 2\r3 4\n", // '\r' separates fields: a line of 4
		"comments":              "# head\n1 2 # tail\n2#3\n#\n 3 1#x y z\n",
		"comment in a field":    "1 2#3 4\n",
		"no trailing newline":   "1 2\n2 3",
		"one field at the end":  "1 2\n3",
		"spaces at the end":     "1 2\n \t\v\f",
		"tabs and others":       "1\t2\n2\v3\n3\f1\n",
		"a 1 MB line":           mb + " y\ny " + mb + "\n",
		"a 1 MB field alone":    "a b\n" + mb + "\n",
		"a 1 MB comment":        "a b\n#" + mb + "\nb a\n",
		"three fields":          "a b c\n",
		"blank lines only":      "\n \n\t\n",
		"empty":                 "",
		"BOM":                   "\uFEFF1 2\n",
		"BOM inside":            "1 \uFEFF2\n",
		"NUL and UTF-8":         "\x00 é\né \x00\n",
		"many malformed":        strings.Repeat("x\n", MaxLineErrors+5) + "a b\n",
		"malformed late":        "1 2\n" + strings.Repeat("3 4\n", 1000) + "5\n",
		"names and numbers mix": "a 1\n1 a\n2 b\nb 2\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) { checkAgainstLines(t, name, in) })
	}
}

// TestScanRandom: random edge lists over a small alphabet of ids, spaces,
// comments and line ends parse as the line parser parses them.
func TestScanRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"1", "2", "10", "007", "0", "a", "é", "-3", "99999999999", " ", "  ", "\t", "\r", "#", "\n", "\n", "\n", "1 2\n", "3 4\n", "5\t6\r\n"}
	for i := range 2000 {
		var b strings.Builder
		for range r.IntN(60) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		checkAgainstLines(t, fmt.Sprintf("random %d %q", i, b.String()), b.String())
	}
	// Well-formed ones, so that most reach the graph.
	for i := range 200 {
		var b strings.Builder
		for range r.IntN(300) {
			fmt.Fprintf(&b, "%d%s%d%s\n", r.IntN(50), []string{" ", "\t", "  "}[r.IntN(3)], r.IntN(50), []string{"", "\r", " # c"}[r.IntN(3)])
		}
		checkAgainstLines(t, fmt.Sprintf("well-formed %d", i), b.String())
	}
}

// TestScanLargeFile: a file large enough to be scanned in parallel chunks
// parses as the line parser parses it, and a malformed line near its end is
// reported by its number with the file's name.
func TestScanLargeFile(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for b.Len() < 3*chunkBytes {
		fmt.Fprintf(&b, "%d %d\n", r.IntN(20000), r.IntN(20000))
		if r.IntN(100) == 0 {
			fmt.Fprintf(&b, "n%d %d # named\n", r.IntN(100), r.IntN(20000))
		}
	}
	in := b.String()
	checkAgainstLines(t, "large", in)
	lines := strings.Count(in, "\n")
	path := filepath.Join(t.TempDir(), "large.edges")
	if err := os.WriteFile(path, []byte(in+"1 2 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFile(path)
	pe, ok := errors.AsType[*ParseError](err)
	if !ok || pe.Count != 1 || pe.Lines[0].Line != lines+1 || pe.Lines[0].Fields != 3 || pe.Name != path {
		t.Fatalf("ParseFile: %v", err)
	}
}

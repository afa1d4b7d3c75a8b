package pagerank

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchEdges is an edge list like bench/pagerank.sh's: 434,000 lines over
// 200,000 numbered nodes, the sources and targets skewed towards small
// numbers (some 4 MB).
var benchEdges = sync.OnceValue(func() string {
	r := rand.New(rand.NewPCG(1, 1))
	skew := func() int { x := r.Float64(); return int(200000 * x * x * x) }
	var b strings.Builder
	b.WriteString("# benchmark graph\n")
	for range 434000 {
		fmt.Fprintf(&b, "%d %d\n", r.IntN(200000), skew())
	}
	return b.String()
})

// BenchmarkParse is the whole of ParseString (scan, number, build) on
// benchEdges; compare with BenchmarkParseLines, the line parser.
func BenchmarkParse(b *testing.B) {
	in := benchEdges()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseString(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseScan is the parse phase alone (scan and number), as
// `ringactor pagerank --timings` reports it.
func BenchmarkParseScan(b *testing.B) {
	in := benchEdges()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	var parse, build time.Duration
	n := 0
	for b.Loop() {
		_, t, err := parseTimed(in)
		if err != nil {
			b.Fatal(err)
		}
		parse, build, n = parse+t.Parse, build+t.Build, n+1
	}
	b.ReportMetric(float64(len(in))*float64(n)/parse.Seconds()/1e6, "parseMB/s")
	b.ReportMetric(float64(build.Microseconds())/float64(n), "build-µs")
}

// BenchmarkParseLines is the line parser on benchEdges: the baseline.
func BenchmarkParseLines(b *testing.B) {
	in := benchEdges()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseLines(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRun is Run with the defaults on benchEdges' graph: the private
// runtime, the kernels, their layouts and the iterations.
func BenchmarkRun(b *testing.B) {
	g, err := ParseString(benchEdges())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := Run(b.Context(), g, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Iterating.Microseconds()), "iterate-µs")
		b.ReportMetric(float64((res.Duration - res.Iterating).Microseconds()), "setup-µs")
		b.ReportMetric(float64(res.Iterations), "iterations")
	}
}

package pagerank

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// buildSorted is the comparison-sort build the counting-sort build
// replaced, kept as its reference. It makes a graph of the named nodes from the edges ends[2i] →
// ends[2i+1] (valid indices), removing duplicates. It takes ownership of
// its arguments.
func buildSorted(names []string, ends []int32) (*Graph, error) {
	n := len(names)
	m := len(ends) / 2
	if m > maxEdges {
		return nil, fmt.Errorf("pagerank: %d edges, at most %d supported", m, maxEdges)
	}
	// Group the edges by source (a counting sort), then sort and deduplicate
	// each node's targets.
	outOff := make([]int, n+1)
	for i := 0; i < len(ends); i += 2 {
		outOff[ends[i]+1]++
	}
	for u := range n {
		outOff[u+1] += outOff[u]
	}
	adj := make([]int32, m)
	next := slices.Clone(outOff[:n])
	for i := 0; i+1 < len(ends); i += 2 {
		u := ends[i]
		adj[next[u]] = ends[i+1]
		next[u]++
	}
	outDeg := make([]int32, n)
	inDeg := make([]int, n+1)
	w := 0
	for u := range n {
		row := adj[outOff[u]:outOff[u+1]]
		if !sortedUnique(row) {
			slices.Sort(row)
			row = slices.Compact(row)
		}
		for _, v := range row {
			inDeg[v+1]++
		}
		outDeg[u] = int32(len(row))
		outOff[u] = w           // now the start of u's deduplicated row
		w += copy(adj[w:], row) // may overwrite row: it moves down
	}
	outOff[n] = w
	adj = adj[:w]

	// Transpose: visiting sources in increasing order leaves every node's
	// in-edge sources sorted.
	for v := range n {
		inDeg[v+1] += inDeg[v]
	}
	inOff := inDeg
	inSrc := make([]int32, w)
	fill := slices.Clone(inOff[:n])
	for u := range n {
		for _, v := range adj[outOff[u]:outOff[u+1]] {
			inSrc[fill[v]] = int32(u)
			fill[v]++
		}
	}
	return &Graph{Names: names, inOff: inOff, inSrc: inSrc, outDeg: outDeg}, nil
}

// TestBuildMatchesSorted: the counting-sort build gives the graph the
// comparison-sort build gave, on random edge lists with duplicates,
// self-loops and isolated nodes.
func TestBuildMatchesSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		n := 1 + r.IntN(60)
		names := make([]string, n)
		for j := range names {
			names[j] = fmt.Sprint(j)
		}
		ends := make([]int32, 2*r.IntN(400))
		for j := range ends {
			ends[j] = int32(r.IntN(n))
		}
		want, err := buildSorted(names, slices.Clone(ends))
		if err != nil {
			t.Fatal(err)
		}
		got, err := build(names, ends)
		if err != nil {
			t.Fatal(err)
		}
		if d := sameGraph(got, want); d != "" {
			t.Fatalf("graph %d: %s", i, d)
		}
	}
}

// sortedUnique reports whether row is strictly increasing.
func sortedUnique(row []int32) bool {
	for i := 1; i < len(row); i++ {
		if row[i] <= row[i-1] {
			return false
		}
	}
	return true
}

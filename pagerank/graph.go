package pagerank

import (
	"fmt"
	"math"
	"slices"
)

// Graph is a directed graph prepared for PageRank: nodes are numbered
// 0 … NumNodes()−1 and named, and the edges are kept once each (a duplicate
// edge counts once; a self-loop is an ordinary edge) as the list of sources
// of each node's in-edges, in increasing order, plus each node's out-degree.
//
// A Graph is immutable once built: Run may use it from several goroutines,
// and several Runs may share it.
type Graph struct {
	// Names are the node names by index. Parse numbers nodes in the order
	// of their first appearance in the input.
	Names []string

	inOff  []int   // node v's in-edge sources are inSrc[inOff[v]:inOff[v+1]]
	inSrc  []int32 // sorted, unique per node
	outDeg []int32 // unique out-edges of each node; 0: dangling
}

// NumNodes returns the number of nodes.
func (g *Graph) NumNodes() int { return len(g.Names) }

// NumEdges returns the number of distinct edges (duplicates counted once).
func (g *Graph) NumEdges() int { return len(g.inSrc) }

// OutDegree returns the number of distinct edges out of node i; 0 means the
// node is dangling.
func (g *Graph) OutDegree(i int) int { return int(g.outDeg[i]) }

// InNeighbors returns the sources of the edges into node i, in increasing
// order, each once. The slice belongs to the graph: do not modify it.
func (g *Graph) InNeighbors(i int) []int32 { return g.inSrc[g.inOff[i]:g.inOff[i+1]:g.inOff[i+1]] }

// maxNodes and maxEdges bound a graph: node indices and per-partition edge
// offsets are int32.
const (
	maxNodes = math.MaxInt32
	maxEdges = math.MaxInt32
)

// NewGraph builds a graph of len(names) nodes from edges, each a pair
// {src, dst} of node indices. Names must be distinct. Duplicate edges count
// once and self-loops are ordinary edges. Nodes without edges are allowed
// (they are dangling).
func NewGraph(names []string, edges [][2]int) (*Graph, error) {
	n := len(names)
	if n > maxNodes {
		return nil, fmt.Errorf("pagerank: %d nodes, at most %d supported", n, maxNodes)
	}
	seen := make(map[string]struct{}, n)
	for _, name := range names {
		if _, dup := seen[name]; dup {
			return nil, fmt.Errorf("pagerank: node name %q appears twice", name)
		}
		seen[name] = struct{}{}
	}
	ends := make([]int32, 2*len(edges))
	for i, e := range edges {
		for _, x := range e {
			if x < 0 || x >= n {
				return nil, fmt.Errorf("pagerank: edge %d (%d → %d) has a node index outside [0, %d)", i, e[0], e[1], n)
			}
		}
		ends[2*i], ends[2*i+1] = int32(e[0]), int32(e[1])
	}
	return build(slices.Clone(names), ends)
}

// build makes a graph of the named nodes from the edges e[2i] → e[2i+1]
// of each e in ends (valid indices), removing duplicates. It takes
// ownership of its arguments.
//
// Two counting sorts and no comparison sort: the edges are grouped by
// source, then scattered by target visiting the sources in increasing
// order, which leaves every node's in-edge sources sorted with duplicates
// side by side; one pass drops those and counts the out-degrees.
func build(names []string, ends ...[]int32) (*Graph, error) {
	n := len(names)
	m := 0
	for _, e := range ends {
		m += len(e) / 2
	}
	if m > maxEdges {
		return nil, fmt.Errorf("pagerank: %d edges, at most %d supported", m, maxEdges)
	}
	// Group the targets by source.
	outOff := make([]int32, n+1)
	for _, e := range ends {
		for i := 0; i+1 < len(e); i += 2 {
			outOff[e[i]+1]++
		}
	}
	for u := range n {
		outOff[u+1] += outOff[u]
	}
	bySrc := make([]int32, m)
	next := slices.Clone(outOff[:n])
	for _, e := range ends {
		for i := 0; i+1 < len(e); i += 2 {
			u := e[i]
			bySrc[next[u]] = e[i+1]
			next[u]++
		}
	}
	// Scatter the sources by target, in increasing source order.
	inOff := make([]int, n+1)
	for _, v := range bySrc {
		inOff[v+1]++
	}
	for v := range n {
		inOff[v+1] += inOff[v]
	}
	inSrc := make([]int32, m)
	for v := range n {
		next[v] = int32(inOff[v])
	}
	for u := range n {
		for _, v := range bySrc[outOff[u]:outOff[u+1]] {
			inSrc[next[v]] = int32(u)
			next[v]++
		}
	}
	// Drop the duplicates, count the out-degrees.
	outDeg := outOff[:n] // reused: bySrc's offsets are done with
	clear(outDeg)
	w := 0
	for v := range n {
		row := inSrc[inOff[v]:inOff[v+1]]
		inOff[v] = w
		prev := int32(-1)
		for _, u := range row {
			if u != prev {
				inSrc[w] = u
				w++
				outDeg[u]++
				prev = u
			}
		}
	}
	inOff[n] = w
	return &Graph{Names: names, inOff: inOff, inSrc: inSrc[:w:w], outDeg: outDeg}, nil
}

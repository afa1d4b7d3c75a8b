package pagerank

// Partitioning. Each partition kernel owns a contiguous range [lo, hi) of
// node indices and reads the edges INTO those nodes straight from the
// graph's in-edge CSR (Graph.inOff, Graph.inSrc), built once by Parse: the
// SpMV of a partition streams its rows' slice of inSrc in order and
// gathers from one shared vector of shares.
//
// Why in-edges (pull) rather than out-edges (push): with in-edges a
// partition computes the share x[u]/outdeg(u) of each of its nodes into its
// own range of the shared share vector, and tells each partition that has
// edges from it that the range is ready (nobody writes it again until the
// next iteration, which starts only once every receiver has reported). The
// receiver sums over its own in-edges into its own nodes: no
// per-destination scatter vectors to zero and fill, no elementwise sum of P
// incoming vectors, no copy of the graph per partition, and every node's sum
// adds its in-edges in increasing source order whatever the number of
// partitions, so the ranks do not depend on P beyond the last bits of the
// dangling mass and of the convergence test. The dangling nodes' mass is
// folded into the one constant each iteration adds to every node.

// nodeWeight is the cost of a node relative to an in-edge in an iteration
// (the share, the update of the rank and its change, the row): measured on a
// scale-free graph of 200,000 nodes, a node costs some three in-edges.
const nodeWeight = 3

// splitRanges cuts nodes 0 … n−1 into p contiguous, non-empty ranges of
// about equal work, a node weighing its in-edges plus nodeWeight, and
// returns the p+1 bounds. It needs 1 ≤ p ≤ n.
func splitRanges(g *Graph, p int) []int {
	n := g.NumNodes()
	bounds := make([]int, p+1)
	bounds[p] = n
	total := float64(g.NumEdges() + nodeWeight*n)
	v := 0
	for i := 1; i < p; i++ {
		target := total * float64(i) / float64(p)
		for v < n && float64(g.inOff[v]+nodeWeight*v) < target {
			v++
		}
		// Leave at least one node for this range and for each one after it.
		v = max(v, bounds[i-1]+1)
		v = min(v, n-(p-i))
		bounds[i] = v
	}
	return bounds
}

// layout is what one partition knows of the graph beyond the CSR: its
// range, its nodes' inverse out-degrees and its dangling nodes.
type layout struct {
	lo, hi   int
	invDeg   []float64 // 1/outdeg(u) for owned u, 0 for a dangling node
	dangling []int32   // local indices of the owned dangling nodes
}

// newLayout builds partition q's layout for the given range bounds.
func newLayout(g *Graph, bounds []int, q int) *layout {
	lo, hi := bounds[q], bounds[q+1]
	l := &layout{lo: lo, hi: hi, invDeg: make([]float64, hi-lo)}
	for u := lo; u < hi; u++ {
		if d := g.outDeg[u]; d > 0 {
			l.invDeg[u-lo] = 1 / float64(d)
		} else {
			l.dangling = append(l.dangling, int32(u-lo))
		}
	}
	return l
}

// links returns, for each partition p, the partitions that need p's shares:
// those that own the target of an edge out of p's range, p itself included.
func links(g *Graph, bounds []int) [][]bool {
	p := len(bounds) - 1
	need := make([][]bool, p)
	for s := range need {
		need[s] = make([]bool, p)
	}
	for q := range p {
		for v := bounds[q]; v < bounds[q+1]; v++ {
			s := 0
			for _, u := range g.inSrc[g.inOff[v]:g.inOff[v+1]] {
				for int(u) >= bounds[s+1] {
					s++
				}
				need[s][q] = true
			}
		}
	}
	return need
}

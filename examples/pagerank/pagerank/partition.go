package pagerank

// Partitioning. Each partition kernel owns a contiguous range [lo, hi) of
// node indices and the edges INTO those nodes, as one compressed-row block
// per source partition: block s holds, for each owned node with in-edges
// from partition s, the positions in partition s's range of their sources.
//
// Why in-edges (pull) rather than out-edges (push): with in-edges a
// partition's outgoing message is the one vector it computes anyway, the
// share x[u]/outdeg(u) of each of its nodes, and the same slice goes to
// every partition that has edges from it (nobody writes it until the next
// iteration, which starts only once every receiver has reported). The
// receiver sums over its
// own in-edges into its own nodes: no per-destination scatter vectors to
// zero and fill, no elementwise sum of P incoming vectors, and every node's
// sum adds its in-edges in increasing source order whatever the number of
// partitions, so the ranks do not depend on P beyond the last bits of the
// dangling mass and of the convergence test.

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

// block is the in-edges of a partition's nodes from one source partition,
// in compressed rows: owned node rows[i] (a local index; only nodes with at
// least one edge from that partition are listed, in increasing order) has
// the sources src[off[i]:off[i+1]], local indices in the source partition's
// range, in increasing order. A pass over a block visits only its rows, so P
// blocks cost no more than one: the work is the edges plus the (node,
// source partition) pairs that have edges.
type block struct {
	rows []int32
	off  []int32
	src  []int32
}

// layout is what one partition knows of the graph: its range, its in-edge
// blocks, its nodes' inverse out-degrees and its dangling nodes.
type layout struct {
	lo, hi   int
	blocks   []block   // by source partition; empty where no edge comes from it
	invDeg   []float64 // 1/outdeg(u) for owned u, 0 for a dangling node
	dangling []int32   // local indices of the owned dangling nodes
}

// newLayout builds partition q's layout for the given range bounds.
func newLayout(g *Graph, bounds []int, q int) *layout {
	lo, hi := bounds[q], bounds[q+1]
	p := len(bounds) - 1
	l := &layout{lo: lo, hi: hi, blocks: make([]block, p), invDeg: make([]float64, hi-lo)}
	for u := lo; u < hi; u++ {
		if d := g.outDeg[u]; d > 0 {
			l.invDeg[u-lo] = 1 / float64(d)
		} else {
			l.dangling = append(l.dangling, int32(u-lo))
		}
	}

	// runs calls f for each run of node v's in-edge sources that lie in one
	// source partition s. The sources are sorted, so the runs come in
	// increasing s.
	runs := func(v int, f func(s int, srcs []int32)) {
		srcs := g.inSrc[g.inOff[v]:g.inOff[v+1]]
		s := 0
		for len(srcs) > 0 {
			for int(srcs[0]) >= bounds[s+1] {
				s++
			}
			n := 1
			for n < len(srcs) && int(srcs[n]) < bounds[s+1] {
				n++
			}
			f(s, srcs[:n])
			srcs = srcs[n:]
		}
	}
	// Size the blocks exactly, then fill them.
	rows, edges := make([]int, p), make([]int, p)
	for v := lo; v < hi; v++ {
		runs(v, func(s int, srcs []int32) {
			rows[s]++
			edges[s] += len(srcs)
		})
	}
	for s := range p {
		if rows[s] > 0 {
			l.blocks[s] = block{rows: make([]int32, 0, rows[s]), off: make([]int32, 1, rows[s]+1), src: make([]int32, 0, edges[s])}
		}
	}
	for v := lo; v < hi; v++ {
		runs(v, func(s int, srcs []int32) {
			b := &l.blocks[s]
			b.rows = append(b.rows, int32(v-lo))
			for _, u := range srcs {
				b.src = append(b.src, u-int32(bounds[s]))
			}
			b.off = append(b.off, int32(len(b.src)))
		})
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

package stream

// Node kinds of a Topology.
const (
	NodeSource = "source"
	NodeStage  = "stage"
	NodeSink   = "sink"
)

// Topology is a graph's shape as an operator sees it: its nodes and edges,
// read at call time (the admin dashboard draws it, coloured by Stats).
type Topology struct {
	// ID is the graph's id, the prefix of its stage kernels' ids.
	ID string `json:"id"`
	// Phase is "building", "started", "draining", "drained" or "stopped".
	Phase string `json:"phase"`
	// Capacity is each stage instance's input ring, in packets (its
	// overflow holds as many again).
	Capacity int `json:"capacity"`
	// Batch is how many elements one packet carries at most.
	Batch int            `json:"batch"`
	Nodes []TopologyNode `json:"nodes"`
	Edges []TopologyEdge `json:"edges"`
}

// TopologyNode is one source, stage or sink of a Topology.
type TopologyNode struct {
	Name string `json:"name"`
	// Kind is NodeSource, NodeStage or NodeSink.
	Kind        string `json:"kind"`
	Parallelism int    `json:"parallelism"`
	// Chained: its one instance runs on its upstream's loop.
	Chained bool `json:"chained,omitempty"`
	// Kernels are its instances' ring-kernel ids (none for a source or a
	// chained stage).
	Kernels []string `json:"kernels,omitempty"`
}

// TopologyEdge is one edge of a Topology, from a node's output to a node's
// input, by name.
type TopologyEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// String names a phase.
func (p phase) String() string {
	switch p {
	case building:
		return "building"
	case started:
		return "started"
	case draining:
		return "draining"
	case drained:
		return "drained"
	default:
		return "stopped"
	}
}

// ID returns the graph's id ("stream.N"), the prefix of its kernels' ids.
func (g *Graph) ID() string { return g.id }

// Topology returns the graph's nodes (in declaration order) and edges.
func (g *Graph) Topology() Topology {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := Topology{ID: g.id, Phase: g.phase.String(), Capacity: g.cfg.capacity, Batch: g.cfg.batch,
		Nodes: make([]TopologyNode, 0, len(g.nodes))}
	for _, n := range g.nodes {
		tn := TopologyNode{Name: n.name, Kind: NodeStage, Parallelism: n.par, Chained: n.chained}
		switch {
		case !n.loop:
			tn.Kind = NodeSource
		case n.sink:
			tn.Kind = NodeSink
		}
		if n.loop && !n.chained {
			for i := range n.par {
				tn.Kernels = append(tn.Kernels, g.kernelID(n, i))
			}
		}
		t.Nodes = append(t.Nodes, tn)
		for _, s := range n.succ {
			t.Edges = append(t.Edges, TopologyEdge{From: n.name, To: s.name})
		}
	}
	return t
}

package stream

import (
	"sort"
	"sync"

	"github.com/ringactor/ringactor/actors"
)

// registry holds the started graphs of the process by runtime, for
// observers (the admin dashboard) to list: a graph is added by Start and
// removed by Stop.
var registry = struct {
	mu     sync.Mutex
	graphs map[*actors.Runtime]map[*Graph]struct{}
}{graphs: map[*actors.Runtime]map[*Graph]struct{}{}}

// register records g, started in rt.
func register(rt *actors.Runtime, g *Graph) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	set := registry.graphs[rt]
	if set == nil {
		set = map[*Graph]struct{}{}
		registry.graphs[rt] = set
	}
	set[g] = struct{}{}
}

// unregister forgets g, started in rt.
func unregister(rt *actors.Runtime, g *Graph) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if set := registry.graphs[rt]; set != nil {
		delete(set, g)
		if len(set) == 0 {
			delete(registry.graphs, rt)
		}
	}
}

// Graphs returns the graphs started in rt and not yet stopped, by id; nil
// rt means every started graph of the process (each graph that made its
// own runtime included).
func Graphs(rt *actors.Runtime) []*Graph {
	registry.mu.Lock()
	var out []*Graph
	for r, set := range registry.graphs {
		if rt != nil && r != rt {
			continue
		}
		for g := range set {
			out = append(out, g)
		}
	}
	registry.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return graphLess(out[i].id, out[j].id) })
	return out
}

// graphLess orders graph ids "stream.N" by N.
func graphLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

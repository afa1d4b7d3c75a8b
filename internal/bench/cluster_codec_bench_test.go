package bench

import (
	"testing"

	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

// BenchmarkClusterPingWire measures what a typed cluster request adds per
// message on each side: the wire conversion of a ClusterPing both ways.
func BenchmarkClusterPingWire(b *testing.B) {
	p := ClusterPing{Seq: 1, Data: make([]byte, QuickCluster.PayloadLen)}
	b.ReportAllocs()
	for b.Loop() {
		w, err := wire.PackOf(p, messages.Header{ID: 1}, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := wire.UnpackAs[ClusterPing](w, 0); err != nil {
			b.Fatal(err)
		}
	}
}

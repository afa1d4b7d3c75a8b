//go:build !race

package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/persistence"
)

// BenchmarkStatefulRequests measures requests per second to a stateful
// kind (64 identities, requests from GOMAXPROCS×8 goroutines) without a
// store and write-through on the embedded bbolt store, and reports the
// group commit's mean and largest batch.
func BenchmarkStatefulRequests(b *testing.B) {
	for _, store := range []string{"none", "bolt"} {
		b.Run(store, func(b *testing.B) {
			var acts atomic.Int64
			k := tallyKind(&acts, 0)
			opts := []Option{WithLogger(actors.DiscardLogger())}
			if store == "bolt" {
				s, err := persistence.Open(context.Background(), filepath.Join(b.TempDir(), "state.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				opts = append(opts, WithStateStore(s))
			}
			m, err := Start(context.Background(), "durable", Peers(nil), []*Kind{k.Kind()}, opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close(context.Background())
			if err := m.WaitReady(context.Background()); err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ref := k.Ref(m, fmt.Sprintf("b%d", next.Add(1)%64))
				for pb.Next() {
					if _, err := ref.Request(context.Background(), tally{N: 1}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			if st := m.StateStats(); st.Commits > 0 {
				b.ReportMetric(float64(st.Saves)/float64(st.Commits), "saves/commit")
				b.ReportMetric(float64(st.MaxBatch), "max-batch")
			}
		})
	}
}

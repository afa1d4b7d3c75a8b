package actors

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ringactor/ringactor/persistence"
)

// BenchmarkStatefulWriteThrough is a counter kernel under 32×GOMAXPROCS requesters
// (b.SetParallelism): without a store, with write-through on the in-memory
// store, and with write-through on a bbolt file (one fsync per batch).
// It reports the messages per save group commit reached; the ratio of the
// ns/op of "bbolt" to "none" is what durability costs (docs/ring-kernels.md).
func BenchmarkStatefulWriteThrough(b *testing.B) {
	for _, tc := range []struct {
		name  string
		store func(b *testing.B) persistence.Store
	}{
		{"none", nil},
		{"memory", func(*testing.B) persistence.Store { return persistence.NewMemory() }},
		{"bbolt", func(b *testing.B) persistence.Store {
			db, err := persistence.Open(context.Background(), filepath.Join(b.TempDir(), "state.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = db.Close() })
			return db
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rt := newTestRuntime(b)
			var opts []KernelOption
			if tc.store != nil {
				opts = append(opts, WithStateStore(tc.store(b), persistence.Key{}, WriteThrough()))
			}
			k := mustLaunch(b, rt, counterKernel("ctr", opts...), true)
			ctx := context.Background()
			b.SetParallelism(32) // 32 × GOMAXPROCS requesters
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := k.Request(ctx, num{V: 1}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			if st := k.StateStats(); st.Saves > 0 {
				b.ReportMetric(float64(st.Messages)/float64(st.Saves), "msgs/save")
			}
		})
	}
}

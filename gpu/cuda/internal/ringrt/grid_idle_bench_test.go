//go:build linux && cgo

package ringrt

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// simMappedReads is how many loads of mapped host memory the simulated
// device's launches of p have made (hostsim.Program.MappedReads).
func simMappedReads(p *Program) uint64 {
	return p.rt.d.API.(simDevice).MappedReads(p.fn)
}

// BenchmarkIdleGridMappedReads measures what an idle program grid costs
// the host link: the loads of mapped host memory (one PCIe round trip each
// on a GPU) its blocks make per second while 100 mailboxes sit idle, for
// grids of 2 (the simulated device's default), 8 and 32 blocks. One op is
// one idle millisecond; mapped-reads/s and mapped-reads/s/block are the
// figures. The simulated device's idle blocks back off up to 200 µs (a
// GPU's up to 20 µs), so a GPU's rates are about ten times these.
func BenchmarkIdleGridMappedReads(b *testing.B) {
	for _, blocks := range []int{2, 8, 32} {
		b.Run(fmt.Sprintf("blocks=%d", blocks), func(b *testing.B) {
			be, fd := newSimBackend(b, nil)
			be.opt.GridBlocks = blocks
			fd.SetExecShape(blocks, 4)
			p := loadProgram(b, be, saxpySpec())
			var err error
			ks := make([]*Kernel, 100)
			for i := range ks {
				if ks[i], err = be.Open(p, Config{}); err != nil {
					b.Fatal(err)
				}
				ks[i].Activate()
			}
			time.Sleep(50 * time.Millisecond) // let the blocks reach their longest backoff: an idle grid, not a measurement of the wake-up
			b.ResetTimer()
			r0, t0 := simMappedReads(p), time.Now()
			for range b.N {
				time.Sleep(time.Millisecond)
			}
			reads, secs := float64(simMappedReads(p)-r0), time.Since(t0).Seconds()
			b.StopTimer()
			b.ReportMetric(reads/secs, "mapped-reads/s")
			b.ReportMetric(reads/secs/float64(blocks), "mapped-reads/s/block")
			for _, k := range ks {
				if err := k.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

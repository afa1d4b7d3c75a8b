//go:build !race && linux && cgo

package cluster_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// BenchmarkDeviceFaultMove measures the calls after a member's full device
// fault, as cluster/multiproc's TestDeviceFaultAcrossProcesses makes them
// in one process: members "one" (1 simulated device), "three" (3) and one
// without a device, and a client, call 200 identities of a device-only kind
// and 40 of a device-preferred kind once each; then every device of
// "three" faults, and once it has passivated its device identities the
// client calls each identity once more (those of "three" move to "one").
// Reported: the calls' latency after the fault (p50, p99, max, in ms) and
// the device epochs on "one" meanwhile. One cluster per iteration: run it
// with -benchtime 1x (or Nx for N clusters in a row).
func BenchmarkDeviceFaultMove(b *testing.B) {
	only, err := cluster.DefineDevice[countReq, countResp]("only", actors.DeviceSource{Code: countCUDA, Entry: "count", State: countState{}}, countFallback)
	if err != nil {
		b.Fatal(err)
	}
	only.Kind().Require(cluster.DeviceOnly)
	pref, err := cluster.DefineDevice[countReq, countResp]("pref", actors.DeviceSource{Code: countCUDA, Entry: "count", State: countState{}}, countFallback)
	if err != nil {
		b.Fatal(err)
	}
	var after []time.Duration
	epochs := 0
	for range b.N {
		lat, n := faultMoveOnce(b, only, pref)
		after = append(after, lat...)
		epochs += n
	}
	slices.Sort(after)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(after[len(after)/2]), "p50-ms")
	b.ReportMetric(ms(after[len(after)*99/100]), "p99-ms")
	b.ReportMetric(ms(after[len(after)-1]), "max-ms")
	b.ReportMetric(float64(epochs)/float64(b.N), "epochs/op")
}

// faultMoveOnce runs one cluster of BenchmarkDeviceFaultMove: the latency of
// each call after the fault, and the device epochs on "one" meanwhile.
func faultMoveOnce(b *testing.B, only, pref *cluster.KindOf[countReq, countResp]) ([]time.Duration, int) {
	devOne := simdevice.NewBackends(1, 64<<20)
	devThree := simdevice.NewBackends(3, 64<<20)
	defer func() {
		for _, s := range append(devOne, devThree...) {
			_ = s.Close()
		}
	}()
	ctx := testCtx(b)
	var started []*cluster.Member
	defer func() {
		for _, m := range slices.Backward(started) {
			if err := m.Close(testCtx(b)); err != nil {
				b.Error(err)
			}
		}
	}()
	start := func(seeds []*cluster.Member, client bool, devs ...gpu.Backend) *cluster.Member {
		opts := []cluster.Option{cluster.WithLogger(actors.DiscardLogger())}
		if len(devs) > 0 {
			opts = append(opts, cluster.WithRuntimeOptions(actors.WithBackends(devs...)))
		}
		kinds := []*cluster.Kind{only.Kind(), pref.Kind()}
		if client {
			kinds = nil
			opts = append(opts, cluster.AsClient())
		}
		var addrs []string
		for _, s := range seeds {
			addrs = append(addrs, s.Address())
		}
		m, err := cluster.Start(ctx, "faultmove", cluster.Peers(addrs), kinds, opts...)
		if err != nil {
			b.Fatal(err)
		}
		started = append(started, m)
		return m
	}
	one := start(nil, false, devOne[0])
	three := start([]*cluster.Member{one}, false, devThree[0], devThree[1], devThree[2])
	cpu := start([]*cluster.Member{one, three}, false)
	cl := start([]*cluster.Member{one, three, cpu}, true)
	for _, m := range started {
		if err := m.WaitMembers(ctx, 3); err != nil {
			b.Fatal(err)
		}
	}
	round := func() []time.Duration {
		var lat []time.Duration
		for _, k := range []struct {
			kind *cluster.KindOf[countReq, countResp]
			n    int
		}{{only, 200}, {pref, 40}} {
			for i := range k.n {
				t0 := time.Now()
				if _, err := k.kind.Ref(cl, fmt.Sprintf("d%d", i)).Request(ctx, countReq{Add: 1}); err != nil {
					b.Fatalf("%s/d%d: %v", k.kind.Name(), i, err)
				}
				lat = append(lat, time.Since(t0))
			}
		}
		return lat
	}
	round()
	before, epochs := three.Advertisements(), devOne[0].EpochStats().Count
	for _, d := range devThree {
		d.MarkFailed(errors.New("injected fault"))
	}
	waitUntil(b, ctx, "the faulted member passivating its device identities", func() bool {
		return three.Advertisements() > before && len(three.Runtime().DeviceKernels()) == 0
	})
	return round(), devOne[0].EpochStats().Count - epochs
}

//go:build linux && cgo

package cuda

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
)

// TestDeviceEpochKeepsMessages: while two rings exchange messages, device
// epochs park and relaunch them again and again, back to back; every reply
// still comes back exactly once and in order; no epoch makes a call the
// strict hazard model refuses, and in blocking mode, where the model
// really waits as a GPU would, the protocol still completes. Before epochs
// settled and spaced themselves, the storm parked each relaunched loop
// before its host threads had started, so it never handled a message
// (processed 0, every run without -race).
func TestDeviceEpochKeepsMessages(t *testing.T) {
	for _, mode := range []hostsim.HazardMode{hostsim.HazardStrict, hostsim.HazardBlocking} {
		t.Run(map[hostsim.HazardMode]string{hostsim.HazardStrict: "strict", hostsim.HazardBlocking: "blocking"}[mode], func(t *testing.T) {
			epochsKeepMessages(t, mode)
		})
	}
}

func epochsKeepMessages(t *testing.T, mode hostsim.HazardMode) {
	b, _ := newSimBackend(t, nil)
	simHazards(b).SetMode(mode, time.Until(hangDeadline(t))) // the watchdog as a hang guard
	rings := []*RingKernel{launchRing(t, b), launchRing(t, b)}
	for _, k := range rings {
		k.Activate()
	}
	stop := make(chan struct{})
	epochs := make(chan error, 1)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				if n == 0 {
					epochs <- errors.New("no epoch ran")
					return
				}
				epochs <- nil
				return
			default:
			}
			if _, err := b.DeviceEpoch(context.Background()); err != nil {
				epochs <- err
				return
			}
			n++
		}
	}()
	var wg sync.WaitGroup
	errs := make([]error, len(rings))
	for i, k := range rings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ringtest.ExchangeErr(k, 300, float32(1000*i))
		}()
	}
	wg.Wait()
	close(stop)
	if err := errors.Join(append(errs, <-epochs)...); err != nil {
		t.Fatal(err)
	}
	st := b.EpochStats()
	if st.Count == 0 || st.RingsParked < st.Count || st.Max <= 0 || st.LastReason != "DeviceEpoch" {
		t.Fatalf("epoch stats %+v", st)
	}
	for _, k := range rings {
		if p := k.Control().Processed.Load(); p != 300 {
			t.Fatalf("processed %d", p)
		}
	}
}

// TestStrictHazardModelBites is the companion of TestDeviceHazards: the
// strict model does fail a synchronising call made while a ring runs (so
// it cannot pass everything), naming the call and the ring, and a launch
// held back by a barrier issued beside a ring. The same calls made through
// the backend pass, because it parks the rings first.
func TestStrictHazardModelBites(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	k := launchRing(t, b)
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	cb := uint64(uintptr(unsafe.Pointer(k.Control())))
	var he *hostsim.HazardError
	// A module load straight through the driver, beside the ring.
	err = d.Do(func() error { _, _, err := d.API.ModuleLoadData(OneShotPTX, false); return err })
	if !errors.As(err, &he) || !errors.Is(err, hostsim.ErrHazard) || he.Call != "cuModuleLoadDataEx" ||
		he.Class != hostsim.CallSynchronizing || he.Kernel != "rc_ring_"+ringmsg.Sum.DeviceEntry() || he.Control != cb {
		t.Fatalf("module load beside a ring = %v", err)
	}
	// cuMemFree of memory from cuMemAlloc: the barrier passes, the free does not.
	var p DevicePtr
	err = d.Do(func() error { var err error; p, err = d.API.MemAlloc(256); return err })
	if err != nil {
		t.Fatalf("cuMemAlloc is a barrier, not a wait: %v", err)
	}
	// ... and the barrier now holds back the next launch on any stream.
	x, _ := gpu.NewBuffer([]float32{-1, 2})
	defer x.Free()
	err = b.Execute(context.Background(), builtin(t, "relu"), []*gpu.UnifiedBuffer{x}, x, nil)
	if !errors.As(err, &he) || he.HeldBy != "cuMemAlloc_v2" || he.Control != cb {
		t.Fatalf("launch after a barrier beside a ring = %v", err)
	}
	err = d.Do(func() error { return d.API.MemFree(p) })
	if !errors.As(err, &he) || he.Call != "cuMemFree_v2" || he.Control != cb {
		t.Fatalf("cuMemFree beside a ring = %v", err)
	}
	// The backend's own paths: an epoch around the free passes.
	if err := d.Do(func() error {
		return d.Epoch(context.Background(), "cuMemFree_v2", func() error { return d.API.MemFree(p) })
	}); err != nil {
		t.Fatalf("cuMemFree in an epoch: %v", err)
	}
	// The relaunched ring cleared the barrier's fence (it ended), so
	// launches pass again, and the ring still answers.
	y, _ := gpu.NewBuffer([]float32{-1, 2})
	defer y.Free()
	if err := b.Execute(context.Background(), builtin(t, "relu"), []*gpu.UnifiedBuffer{y}, y, nil); err != nil {
		t.Fatalf("Execute after the epoch: %v", err)
	}
	if v := values(t, y); v[0] != 0 || v[1] != 2 {
		t.Fatalf("relu = %v", v)
	}
	k.Activate()
	ringtest.Exchange(t, k, 5, 1)
	if st := b.EpochStats(); st.Count != 1 || st.LastReason != "cuMemFree_v2" {
		t.Fatalf("epoch stats %+v", st)
	}
}

// TestBlockingModeWaits: in blocking mode a synchronising call beside a
// ring really waits, until the ring has exited; a backend path (a module
// load through LoadPTX) parks the ring and does not wait at all.
func TestBlockingModeWaits(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	hz := simHazards(b)
	hz.SetMode(hostsim.HazardBlocking, time.Until(hangDeadline(t))) // the watchdog as a hang guard
	k := launchRing(t, b)
	img := append(append([]byte(nil), OneShotPTX...), "\n// another image\n"...)
	if err := b.LoadPTX(context.Background(), img, "rc_add_f64"); err != nil {
		t.Fatalf("LoadPTX beside a ring: %v", err)
	}
	if st := b.EpochStats(); st.Count != 1 || st.LastReason != "cuModuleLoadDataEx" {
		t.Fatalf("epoch stats %+v", st)
	}
	d, _ := b.device()
	done := make(chan error, 1)
	// A NULL-stream synchronisation is a cuCtxSynchronize to the model.
	go func() { done <- d.Do(func() error { return d.API.StreamSynchronize(Stream{}) }) }()
	select {
	case err := <-done:
		t.Fatalf("cuCtxSynchronize returned (%v) beside a running ring", err)
	case <-time.After(20 * time.Millisecond):
	}
	k.Terminate(ring.TerminateNow)
	if err := <-done; err != nil {
		t.Fatalf("cuCtxSynchronize after the ring exited: %v", err)
	}
}

// TestFallbackAllocatorParksRings: without the stream-ordered allocator
// every device allocation and free beside a ring runs in an epoch, and
// the strict model passes.
func TestFallbackAllocatorParksRings(t *testing.T) {
	fd := newFakeDevice(64 << 20)
	fd.DisablePool()
	b, _ := newSimBackend(t, fd)
	if b.StreamOrderedAlloc() {
		t.Fatal("the pool was used although the driver has none")
	}
	k := launchRing(t, b)
	k.Activate()
	x, _ := gpu.NewBuffer([]float32{-1, 2, -3})
	if err := b.Execute(context.Background(), builtin(t, "relu"), []*gpu.UnifiedBuffer{x}, x, nil); err != nil {
		t.Fatal(err)
	}
	if v := values(t, x); v[0] != 0 || v[1] != 2 || v[2] != 0 {
		t.Fatalf("relu = %v", v)
	}
	if err := x.Free(); err != nil {
		t.Fatal(err)
	}
	if st := b.EpochStats(); st.Count < 2 {
		t.Fatalf("alloc and free beside a ring without a pool: %d epochs", st.Count)
	}
	ringtest.Exchange(t, k, 10, 5)
}

// TestArenaGrowsInEpoch: rings beyond the pinned arena's reservation grow
// it in an epoch while the first ring runs.
func TestArenaGrowsInEpoch(t *testing.T) {
	probe, _ := newSimBackend(t, nil)
	size := launchRing(t, probe).PinnedBytes()
	b, fd := newSimBackend(t, nil)
	WithArenaBytes(size)(b) // room for exactly one ring
	first := launchRing(t, b)
	first.Activate()
	allocs := fd.Sim().HostAllocs()
	second := launchRing(t, b)
	second.Activate()
	if fd.Sim().HostAllocs() != allocs+1 {
		t.Fatalf("pinned allocations %d -> %d", allocs, fd.Sim().HostAllocs())
	}
	if st := b.EpochStats(); st.Count < 1 || st.LastReason != "cuMemHostAlloc" {
		t.Fatalf("epoch stats %+v", st)
	}
	ringtest.Exchange(t, first, 10, 1)
	ringtest.Exchange(t, second, 10, 2)
}

// TestCloseStopsLiveRings: closing the backend with a ring still running
// stops it before anything synchronising, keeps its replies readable and
// leaks nothing.
func TestCloseStopsLiveRings(t *testing.T) {
	fd := newFakeDevice(64 << 20)
	b, _ := newSimulated(fd)
	k, err := b.LaunchRingProgram(sumProgram(t, b), RingConfig{Capacity: 8, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	k.Activate()
	if ok, _ := k.TrySubmit(ringmsg.Sum.TypeID(), 7, ringtest.SumMsg(7)); !ok {
		t.Fatal("ring full")
	}
	for k.Control().Processed.Load() == 0 {
		runtime.Gosched()
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close with a live ring: %v", err)
	}
	if err := k.Wait(context.Background()); err != nil {
		t.Fatalf("Wait after Close: %v", err)
	}
	if h, _, ok := k.TryPoll(); !ok || h.CorrelationID != 7 {
		t.Fatalf("reply after Close: %+v %v", h, ok)
	}
	if _, err := k.TrySubmit(ringmsg.Sum.TypeID(), 8, ringtest.SumMsg(8)); !errors.Is(err, ErrRingClosed) {
		t.Fatalf("TrySubmit after Close = %v", err)
	}
	if l := fd.Leaks(); l != "" {
		t.Fatalf("leaked %s", l)
	}
}

// TestTerminateRacesEpochs: an owner's drain and Wait racing epochs that
// run back to back still answer every queued message once, and Wait
// returns only when the ring has really stopped.
func TestTerminateRacesEpochs(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	k := launchRing(t, b)
	for i := range 16 {
		if ok, err := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(i), ringtest.SumMsg(float32(i))); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := b.DeviceEpoch(context.Background()); err != nil {
				done <- err
				return
			}
		}
	}()
	k.Terminate(ring.TerminateDrain)
	ctx, cancel := hangCtx(t)
	defer cancel()
	// The output ring holds all 16 replies (capacity 16), so the drain
	// completes without the host popping.
	werr := k.Wait(ctx)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if werr != nil {
		t.Fatal(werr)
	}
	for i := range 16 {
		h, _, ok := k.TryPoll()
		if !ok || h.CorrelationID != uint64(i) {
			t.Fatalf("reply %d: %+v %v", i, h, ok)
		}
	}
	if _, _, ok := k.TryPoll(); ok {
		t.Fatal("a duplicate reply")
	}
}

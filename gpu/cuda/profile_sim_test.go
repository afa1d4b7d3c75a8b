//go:build linux && cgo

package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
)

// TestSimProfileDefault: the simulated device is an H100 unless told
// otherwise, and WithDeviceProfile chooses its hardware (a profile that
// does not validate keeps the device from opening).
func TestSimProfileDefault(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	if p, err := b.Profile(); err != nil || p != H100Profile() {
		t.Fatalf("Profile = %+v, %v", p, err)
	}
	if l := simHazards(b).Limits(); l.ResidentGrids != 128 || l.SMs != 132 || l.HardwareQueues != 8 {
		t.Fatalf("limits %+v", l)
	}
	small := H100Profile()
	small.Name, small.MaxResidentGrids, small.HardwareQueues = "small", 4, 2
	b2 := simBackend(16<<20, WithDeviceProfile(small))
	defer b2.Close()
	if p, err := b2.Profile(); err != nil || p != small {
		t.Fatalf("Profile = %+v, %v", p, err)
	}
	if l := simHazards(b2).Limits(); l.ResidentGrids != 4 || l.HardwareQueues != 2 {
		t.Fatalf("limits %+v", l)
	}
	bad := simBackend(16<<20, WithDeviceProfile(DeviceProfile{HardwareQueues: 99}))
	defer bad.Close()
	if _, err := bad.Profile(); !errors.Is(err, gpu.ErrArgument) {
		t.Fatalf("a profile of 99 hardware queues: %v", err)
	}
}

// TestSim129PersistentGridsWithoutBudget: the simulated device's model
// catches what a runtime without a budget would do to a GPU. With the
// device's budget taken away, 128 persistent kernels launched through the
// backend's low-level API (LaunchRingProgram) fill the H100 profile's
// resident grids; the 129th launch fails with the residency hazard naming
// the resident-grid limit — on an H100 it would wait forever — and so
// does a one-shot Execute, which needs a grid slot too. Closing one ring
// frees its slot. The 128 rings still answer. (TestSimBudgetResidentGrids
// is the same with the budget: it refuses instead.)
func TestSim129PersistentGridsWithoutBudget(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	hz := simHazards(b)
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	d.Budget = nil
	prog := sumProgram(t, b)
	launch := ringLauncher(t, b, prog)
	var rings []*RingKernel
	for i := range 128 {
		k, err := launch()
		if err != nil {
			t.Fatalf("ring %d: %v", i+1, err)
		}
		rings = append(rings, k)
	}
	_, err = launch()
	var he *hostsim.HazardError
	if !errors.As(err, &he) || !errors.Is(err, hostsim.ErrResidency) || he.Limit != hostsim.LimitResidentGrids ||
		he.LimitValue != 128 || he.Holders != 128 || he.Call != "cuLaunchKernel" {
		t.Fatalf("129th persistent grid = %v", err)
	}
	x, _ := gpu.NewBuffer([]float32{-1, 2})
	defer x.Free()
	if err := b.Execute(context.Background(), builtin(t, "relu"), []*gpu.UnifiedBuffer{x}, x, nil); !errors.Is(err, hostsim.ErrResidency) {
		t.Fatalf("Execute beside 128 persistent grids = %v", err)
	}
	// The launches become resident as their streams reach them.
	for grids, _ := hz.Resident(); grids != 128; grids, _ = hz.Resident() {
		if grids > 128 {
			t.Fatalf("%d grids resident", grids)
		}
		runtime.Gosched()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rings[0].Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := launch(); err != nil {
		t.Fatalf("a launch once a ring closed: %v", err)
	}
	for _, k := range []*RingKernel{rings[1], rings[127]} {
		k.Activate()
		ringtest.Exchange(t, k, 3, 1)
	}
	if n := len(hz.Raised()); n != 2 {
		t.Fatalf("%d hazards, want 2: %v", n, hz.Raised())
	}
}

// TestSimBudgetResidentGrids: with the device's budget (the default),
// persistent launches stop at the resident grids less the reserve (128 −
// 8): the 121st ring is refused at once with a capacity error naming the
// limit, no hazard is raised, and a one-shot Execute beside the 120 rings
// completes. Closing a ring gives its grid back.
func TestSimBudgetResidentGrids(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	hz := simHazards(b)
	prog := sumProgram(t, b)
	launch := ringLauncher(t, b, prog)
	var rings []*RingKernel
	for i := range 120 {
		k, err := launch()
		if err != nil {
			t.Fatalf("ring %d: %v", i+1, err)
		}
		rings = append(rings, k)
	}
	_, err := launch()
	var be *BudgetError
	if !errors.Is(err, gpu.ErrDeviceCapacity) || !errors.Is(err, ErrBudget) || !errors.As(err, &be) || be.Limit != "resident grids" {
		t.Fatalf("121st persistent grid = %v", err)
	}
	s, err := b.DeviceBudget()
	if err != nil || s.Grids != 120 || s.Refused != 1 {
		t.Fatalf("budget %+v, %v: want 120 grids, 1 refusal", s, err)
	}
	x, _ := gpu.NewBuffer([]float32{-1, 2})
	defer x.Free()
	if err := b.Execute(context.Background(), builtin(t, "relu"), []*gpu.UnifiedBuffer{x}, x, nil); err != nil {
		t.Fatalf("Execute beside 120 persistent grids = %v", err)
	}
	if got, err := gpu.ToSlice[float32](context.Background(), x); err != nil || got[0] != 0 || got[1] != 2 {
		t.Fatalf("relu = %v, %v", got, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rings[0].Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := launch(); err != nil {
		t.Fatalf("a launch once a ring closed: %v", err)
	}
	for _, k := range []*RingKernel{rings[1], rings[119]} {
		k.Activate()
		ringtest.Exchange(t, k, 3, 1)
	}
	if raised := hz.Raised(); len(raised) != 0 {
		t.Fatalf("hazards %v, want none", raised)
	}
}

// TestSimFalseDependency: with 2 hardware queues the backend's stream is on
// queue 0, a ring's stream on queue 1, and two more streams on 0 and 1.
// Strict mode: an event recorded on the ring's stream (behind the
// never-ending kernel, on a queue another stream shares) is a
// false-dependency hazard; Execute on the other queue and work of the
// other stream on the ring's queue still run. Blocking mode: the event
// waits, the other stream's work on that queue waits behind it, Execute
// does not; when the ring exits, everything runs.
func TestSimFalseDependency(t *testing.T) {
	fd := newFakeDevice(64 << 20)
	p := H100Profile()
	p.HardwareQueues = 2
	fd.SetProfile(p)
	b, _ := newSimBackend(t, fd)
	hz := simHazards(b)
	k := launchRing(t, b)
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := hz.Queue(streamID(d.Stream)); q != 0 {
		t.Fatalf("the backend's stream on queue %d", q)
	}
	rs := ringStream(t, b)
	if q, _ := hz.Queue(streamID(rs)); q != 1 {
		t.Fatalf("the ring's stream on queue %d", q)
	}
	var s2, s3 Stream
	if err := d.Do(func() error {
		var err error
		if s2, err = fd.StreamCreate(StreamNonBlocking); err != nil {
			return err
		}
		s3, err = fd.StreamCreate(StreamNonBlocking)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := errors.Join(fd.StreamDestroy(s2), fd.StreamDestroy(s3)); err != nil {
			t.Error(err)
		}
	}()
	ev, _ := fd.EventCreate(0)
	relu := func() error {
		x, _ := gpu.NewBuffer([]float32{-1, 2})
		defer x.Free()
		if err := b.Execute(context.Background(), builtin(t, "relu"), []*gpu.UnifiedBuffer{x}, x, nil); err != nil {
			return err
		}
		if v := values(t, x); v[0] != 0 || v[1] != 2 {
			t.Fatalf("relu = %v", v)
		}
		return nil
	}

	err = fd.EventRecord(ev, rs)
	var he *hostsim.HazardError
	if !errors.As(err, &he) || !errors.Is(err, hostsim.ErrFalseDependency) || he.Limit != hostsim.LimitHardwareQueue ||
		he.Queue != 1 || he.LimitValue != 2 || he.OnStream != streamID(rs) || he.Stream != streamID(rs) {
		t.Fatalf("event behind the ring = %v", err)
	}
	if err := relu(); err != nil {
		t.Fatalf("Execute on the other queue: %v", err)
	}
	if err := errors.Join(fd.EventRecord(ev, s3), fd.StreamSynchronize(s3)); err != nil {
		t.Fatalf("work of another stream on the ring's queue: %v", err)
	}

	hz.SetMode(hostsim.HazardBlocking, 2*time.Minute)
	if err := fd.EventRecord(ev, rs); err != nil {
		t.Fatalf("blocking mode: %v", err)
	}
	if err := errors.Join(fd.EventRecord(ev, s3), fd.EventRecord(ev, s2)); err != nil {
		t.Fatal(err)
	}
	if n := hz.QueueWaiting(); n != 1 {
		t.Fatalf("%d commands wait behind the ring's queue, want 1", n)
	}
	if err := errors.Join(relu(), fd.StreamSynchronize(s2)); err != nil {
		t.Fatalf("the other queue beside a false dependency: %v", err)
	}
	var de *DriverError
	if err := fd.StreamQuery(s3); !errors.As(err, &de) || de.Result() != ErrNotReady {
		t.Fatalf("the stream behind the false dependency: %v", err)
	}
	k.Terminate(ring.TerminateNow)
	if err := fd.StreamSynchronize(s3); err != nil {
		t.Fatalf("after the ring exited: %v", err)
	}
	if n := len(hz.Raised()); n != 1 {
		t.Fatalf("%d hazards, want 1: %v", n, hz.Raised())
	}
}

// TestOldGridSizingTripsResidency: the grid sizing before the budget —
// (SMs − SMs/8) × 2 blocks a program, 232 on an H200 — under the
// simulated device's residency model of an H200. Without the budget the
// fifth grid of 256-thread blocks cannot become resident (4 × 232 × 256
// threads fill most of the device's 132 × 2,048) and the model raises the
// residency hazard naming that launch: on an H200 it would have waited
// forever, and every Execute behind it. With the budget the same grids are
// refused at once, the third (two leave the reserve's 1,024 threads an SM
// free), and no hazard is raised.
func TestOldGridSizingTripsResidency(t *testing.T) {
	old := 2 * (132 - 132/8)
	for _, budget := range []bool{false, true} {
		t.Run(fmt.Sprintf("budget=%v", budget), func(t *testing.T) {
			fd := newFakeDevice(256 << 20)
			fd.SetProfile(H200Profile())
			b, _ := newSimBackend(t, fd)
			WithGridBlocks(old)(b)
			hz := simHazards(b)
			d, err := b.device()
			if err != nil {
				t.Fatal(err)
			}
			if !budget {
				d.Budget = nil
			}
			p := sumProgram(t, b)
			started := 0
			for threads := 256; threads > 200; threads-- { // a grid per block size
				if err = b.StartRingGrid(p, threads); err != nil {
					break
				}
				started++
			}
			if !budget {
				var he *hostsim.HazardError
				if started != 4 || !errors.As(err, &he) || !errors.Is(err, hostsim.ErrResidency) || he.Limit != hostsim.LimitThreadsPerSM ||
					!strings.HasPrefix(he.Launching, "rc_grid_") {
					t.Fatalf("%d grids, then %v: want 4 and the residency hazard of the fifth", started, err)
				}
				t.Logf("without the budget: %v", err)
				return
			}
			var be *BudgetError
			if started != 2 || !errors.Is(err, gpu.ErrDeviceCapacity) || !errors.As(err, &be) || be.Limit != "threads per SM" {
				t.Fatalf("%d grids, then %v: want 2 and the budget's refusal", started, err)
			}
			if raised := hz.Raised(); len(raised) != 0 {
				t.Fatalf("hazards %v, want none", raised)
			}
			t.Logf("with the budget: %v", err)
		})
	}
}

// ringLauncher returns a launch of one-thread rings of prog on b, each
// closed when the test ends.
func ringLauncher(t *testing.T, b *Backend, prog *RingProgram) func() (*RingKernel, error) {
	return func() (*RingKernel, error) {
		k, err := b.LaunchRingProgram(prog, RingConfig{Capacity: 16, Threads: 1})
		if err == nil {
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := k.Close(ctx); err != nil {
					t.Errorf("closing ring: %v", err)
				}
			})
		}
		return k, err
	}
}

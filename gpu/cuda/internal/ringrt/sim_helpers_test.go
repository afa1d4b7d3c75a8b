//go:build linux && cgo

package ringrt

import (
	"context"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
)

// simDevice is what these tests use of a simulated device: the methods of
// package simdevice's Device. This package's own tests cannot import
// simdevice (it imports gpu/cuda, which imports this package);
// sim_hook_test.go, of package ringrt_test, which can, sets
// NewSimDeviceForTest and CompileForTest.
type simDevice interface {
	driverapi.DeviceAPI
	HostPrograms
	Leaks() string
	ModuleLoads() int
	SetAttribute(driverapi.DeviceAttribute, int)
	Sim() *hostsim.Device
	Hazards() *hostsim.Hazards
	MappedReads(driverapi.Function) uint64
	Enqueue(s driverapi.Stream, op func() error) error
	SetExecShape(blocks, threads int)
}

// newFakeDevice returns a simulated device of mem bytes.
func newFakeDevice(mem uint64) simDevice { return NewSimDeviceForTest(mem).(simDevice) }

// newSimulated returns the ring runtime of the simulated device fd as
// gpu/cuda's backend on it makes it: a device on a locked worker thread,
// the runtime over it. The caller closes its device (b.d.Close).
func newSimulated(t testing.TB, fd simDevice) *Runtime {
	t.Helper()
	w, err := devcore.StartWorker(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := devcore.Open(fd, w, 0, 0, 0)
	if err != nil {
		_ = w.Close()
		t.Fatal(err)
	}
	// A device epoch's park wait is a hang guard in tests (see gpu/cuda's
	// newSimBackend); a test of the timeout itself sets its own.
	d.Epochs.ParkTimeout = time.Until(hangDeadline(t))
	d.Epochs.Spacing = time.Millisecond // gpu/cuda's DefaultEpochSpacing
	d.Budget = devcore.NewBudget(budgetLimits(fd.Hazards().Limits()), devcore.DefaultReserve)
	return New(d, Options{Name: "cuda:sim", Host: fd, Compile: CompileForTest,
		Target: func() (driverapi.NVRTCTarget, error) { return driverapi.NVRTCTarget{}, nil }})
}

// newSimBackend is newSimulated on fd (a fresh simulated device of 256 MiB
// when nil). Cleanup closes the device and checks that nothing leaked.
func newSimBackend(t testing.TB, fd simDevice) (*Runtime, simDevice) {
	t.Helper()
	if fd == nil {
		fd = newFakeDevice(256 << 20)
	}
	rt := newSimulated(t, fd)
	t.Cleanup(func() {
		if err := rt.d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if l := fd.Leaks(); l != "" {
			t.Errorf("after Close the device left %s", l)
		}
	})
	return rt, fd
}

// hangDeadline is when a wait that must end is a hang, not slowness
// (hangguard.Margin before go test's -timeout, an hour from now without
// one).
func hangDeadline(t testing.TB) time.Time {
	if d, ok := hangguard.Context(t).Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Hour)
}

// hangCtx is a context that expires at hangDeadline.
func hangCtx(t testing.TB) (context.Context, context.CancelFunc) {
	return context.WithCancel(hangguard.Context(t))
}

// fakeErr is a driver error as the simulated device makes them.
func fakeErr(call string, code driverapi.Result, name, msg string) error {
	return &driverapi.DriverError{Call: call, Code: int(code), Name: name, Message: msg}
}

// budgetLimits are the simulated device's hardware limits as the budget
// counts them (gpu/cuda's DeviceProfile.budgetLimits does the same).
func budgetLimits(l hostsim.Limits) devcore.BudgetLimits {
	return devcore.BudgetLimits{SMs: l.SMs, ResidentGrids: l.ResidentGrids, BlocksPerSM: l.BlocksPerSM,
		ThreadsPerSM: l.ThreadsPerSM, RegistersPerSM: l.RegistersPerSM, SharedMemPerSM: l.SharedMemPerSM,
		SharedMemReservedPerBlock: l.SharedMemReservedPerBlock}
}

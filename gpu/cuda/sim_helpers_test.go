//go:build linux && cgo

package cuda

import (
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// simDevice is what these tests use of a simulated device: the methods of
// package simdevice's Device. This package's own tests cannot import
// simdevice (it imports this package); sim_hook_test.go, of package
// cuda_test, which can, sets NewSimDeviceForTest and NewSimBackendForTest.
type simDevice interface {
	HostDevice
	Leaks() string
	SetAttribute(DeviceAttribute, int)
	DisablePool()
	ModuleLoads() int
	Sim() *hostsim.Device
	Hazards() *hostsim.Hazards
	MappedReads(Function) uint64
	Enqueue(s Stream, op func() error) error
}

// NewSimDeviceForTest is simdevice.NewDevice (set by sim_hook_test.go).
var NewSimDeviceForTest func(mem uint64) HostDevice

// NewSimBackendForTest is simdevice.NewBackendOn (set by
// sim_hook_test.go).
var NewSimBackendForTest func(d HostDevice, opts ...BackendOption) *Backend

// newFakeDevice returns a simulated device of mem bytes.
func newFakeDevice(mem uint64) simDevice { return NewSimDeviceForTest(mem).(simDevice) }

// newSimulated returns a backend on fd (simdevice.NewBackendOn).
func newSimulated(fd simDevice) (*Backend, simDevice) { return NewSimBackendForTest(fd), fd }

// simBackend is simdevice.NewBackend.
func simBackend(mem uint64, opts ...BackendOption) *Backend {
	return NewSimBackendForTest(newFakeDevice(mem), opts...)
}

// simHazards is simdevice.Hazards: the hazard model of b's simulated
// device, nil for another backend.
func simHazards(b *Backend) *hostsim.Hazards {
	if d, ok := b.HostDevice().(simDevice); ok {
		return d.Hazards()
	}
	return nil
}

// newSimBackend returns a Backend whose device is fd (a fresh simulated
// device when nil). Cleanup closes it and checks that nothing leaked.
func newSimBackend(t testing.TB, fd simDevice) (*Backend, simDevice) {
	t.Helper()
	if fd == nil {
		fd = newFakeDevice(256 << 20)
	}
	b, _ := newSimulated(fd)
	// A device epoch's park wait (DefaultParkTimeout, 10 s) is a hang guard
	// in tests: on a loaded machine the simulated device's ring threads may
	// not run for seconds (TestDeviceEpochKeepsMessages/blocking failed with
	// ErrEpochTimeout, a relaunched ring 6 messages short after 10 s). A test
	// of the timeout itself sets its own.
	WithParkTimeout(time.Until(hangDeadline(t)))(b)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if l := fd.Leaks(); l != "" {
			t.Errorf("after Close the backend left %s", l)
		}
	})
	return b, fd
}

// streamID is the identity the simulated device's hazard model knows s by
// (simdevice's; 0: the NULL stream).
func streamID(s Stream) uint64 { return uint64(uintptr(s.Raw())) }

// ringStream is the stream of b's one live ring kernel's launch, which
// package ringrt keeps to itself: the device's live set hands it out.
func ringStream(t testing.TB, b *Backend) Stream {
	t.Helper()
	d, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	var s []Stream
	_ = d.Do(func() error {
		for p := range d.Epochs.Live() {
			if r, ok := p.(interface{ Stream() Stream }); ok {
				s = append(s, r.Stream())
			}
		}
		return nil
	})
	if len(s) != 1 {
		t.Fatalf("%d live rings, want 1", len(s))
	}
	return s[0]
}

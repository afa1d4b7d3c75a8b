package cuda

import (
	"errors"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// TestWithOrdinal: a backend of device N is named "cuda:N" and, with no
// such device, says so through Available instead of opening device 0.
func TestWithOrdinal(t *testing.T) {
	b := NewBackend(WithOrdinal(3))
	t.Cleanup(func() { _ = b.Close() })
	if b.Name() != "cuda:3" || b.Ordinal() != 3 {
		t.Fatalf("name %q ordinal %d, want cuda:3, 3", b.Name(), b.Ordinal())
	}
	if len(b.Report().Devices) > 3 {
		t.Skip("this machine has a fourth device")
	}
	if err := b.Available(); err == nil || !errors.Is(err, gpu.ErrDevice) {
		t.Fatalf("Available of a missing device: %v, want a device error", err)
	}
	if _, ok := b.DeviceInfo(); ok {
		t.Fatal("DeviceInfo of a missing device: ok")
	}
}

// TestNewBackendsOnePerDevice: one backend per listed device, at least
// one (device 0's, saying why it is unusable).
func TestNewBackendsOnePerDevice(t *testing.T) {
	bs := NewBackends()
	t.Cleanup(func() {
		for _, b := range bs {
			_ = b.Close()
		}
	})
	n := max(len(Probe().Devices), 1)
	if len(bs) != n {
		t.Fatalf("%d backends for %d devices", len(bs), n)
	}
	for i, b := range bs {
		if b.Ordinal() != i {
			t.Fatalf("backend %d has ordinal %d", i, b.Ordinal())
		}
	}
}

//go:build linux && cgo

package simdevice

import (
	"fmt"
	"testing"
)

// TestSimulatedBackendsNames: several simulated devices are cuda:sim0,
// cuda:sim1, …, each its own device with its own info; a lone one stays
// cuda:sim.
func TestSimulatedBackendsNames(t *testing.T) {
	one := NewBackends(1, 16<<20)
	t.Cleanup(func() { _ = one[0].Close() })
	if len(one) != 1 || one[0].Name() != "cuda:sim" {
		t.Fatalf("one simulated device: %d named %q", len(one), one[0].Name())
	}
	bs := NewBackends(3, 16<<20)
	t.Cleanup(func() {
		for _, b := range bs {
			_ = b.Close()
		}
	})
	for i, b := range bs {
		if want := fmt.Sprintf("cuda:sim%d", i); b.Name() != want || b.Ordinal() != i {
			t.Fatalf("device %d: %q ordinal %d, want %q", i, b.Name(), b.Ordinal(), want)
		}
		info, ok := b.DeviceInfo()
		if !ok || info.Index != i || info.TotalMem != 16<<20 || info.ComputeCapability.Major != 9 {
			t.Fatalf("device %d info %+v (%v)", i, info, ok)
		}
		if err := b.Available(); err != nil {
			t.Fatalf("device %d: %v", i, err)
		}
	}
	if Of(bs[0]) == Of(bs[1]) || Of(bs[0]) == nil {
		t.Fatal("two simulated backends share a device")
	}
}

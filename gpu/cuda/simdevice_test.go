//go:build linux && cgo

package cuda

import "testing"

// newSimBackend returns a Backend whose device is fd (a fresh simulated
// device when nil). Cleanup closes it and checks that nothing leaked.
func newSimBackend(t testing.TB, fd *fakeDevice) (*Backend, *fakeDevice) {
	t.Helper()
	if fd == nil {
		fd = newFakeDevice(256 << 20)
	}
	b, _ := newSimulated(fd)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if l := fd.leaks(); l != "" {
			t.Errorf("after Close the backend left %s", l)
		}
	})
	return b, fd
}

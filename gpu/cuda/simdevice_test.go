//go:build linux && cgo

package cuda

import (
	"testing"
	"time"
)

// newSimBackend returns a Backend whose device is fd (a fresh simulated
// device when nil). Cleanup closes it and checks that nothing leaked.
func newSimBackend(t testing.TB, fd *fakeDevice) (*Backend, *fakeDevice) {
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
		if l := fd.leaks(); l != "" {
			t.Errorf("after Close the backend left %s", l)
		}
	})
	return b, fd
}

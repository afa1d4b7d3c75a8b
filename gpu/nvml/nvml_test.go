package nvml

import (
	"errors"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOpenMissingLibrary(t *testing.T) {
	const path = "/nonexistent/libnvidia-ml.so.1"
	m, err := open(path)
	if m != nil || !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("open(%s) = %v, %v; want gpu.ErrDeviceNotAvailable", path, m, err)
	}
	var de *gpu.DeviceError
	if !errors.As(err, &de) || de.Backend != Backend || !strings.Contains(de.Reason, path) {
		t.Fatalf("error %#v does not name the backend and %s", err, path)
	}
	t.Logf("open(%s): %v", path, err)
}

// TestOpenOnThisMachine opens the real NVML: without the NVIDIA driver (this
// project's CI) it must fail cleanly; with one it must read the devices.
func TestOpenOnThisMachine(t *testing.T) {
	m, err := Open()
	if err != nil {
		if !errors.Is(err, gpu.ErrDeviceNotAvailable) {
			t.Fatalf("Open: %v, want gpu.ErrDeviceNotAvailable", err)
		}
		t.Logf("Open: %v", err)
		return
	}
	defer func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	}()
	stats, err := m.Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stats {
		t.Logf("%+v", s)
		if s.Name == "" || s.MemoryTotal <= 0 {
			t.Errorf("device %+v", s)
		}
	}
}

func TestLibraryPathEnvironment(t *testing.T) {
	t.Setenv(LibraryEnv, "")
	if got := libraryPath(); got != DefaultLibrary {
		t.Fatalf("libraryPath() = %q", got)
	}
	t.Setenv(LibraryEnv, "/nonexistent/libnvidia-ml.so.1")
	if got := libraryPath(); got != "/nonexistent/libnvidia-ml.so.1" {
		t.Fatalf("libraryPath() = %q", got)
	}
	m, err := Open()
	if m != nil || err == nil || !strings.Contains(err.Error(), "/nonexistent/libnvidia-ml.so.1") {
		t.Fatalf("Open with %s set: %v, %v", LibraryEnv, m, err)
	}
	if stats, err := Snapshot(); stats != nil || !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("Snapshot with %s set: %v, %v", LibraryEnv, stats, err)
	}
}

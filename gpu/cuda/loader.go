package cuda

import (
	"fmt"
	"os"
	"sync"
)

// loader loads one driver library once. The package keeps one for the
// process (see [Load]); tests make their own with newLoader.
type loader struct {
	path string

	libOnce sync.Once
	drv     *Driver
	libErr  error

	initOnce sync.Once
	initErr  error
}

func newLoader(path string) *loader {
	if path == "" {
		path = DefaultLibrary
	}
	return &loader{path: path}
}

// libraryPath is the library to load: $RINGACTOR_CUDA_LIBRARY or
// libcuda.so.1.
func libraryPath() string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return p
	}
	return DefaultLibrary
}

var processLoader = sync.OnceValue(func() *loader { return newLoader(libraryPath()) })

// library dlopens the library and resolves its entry points, once.
func (l *loader) library() (*Driver, error) {
	l.libOnce.Do(func() {
		drv, reason := openDriver(l.path)
		if drv == nil {
			l.libErr = unavailable(reason)
			return
		}
		l.drv = drv
	})
	return l.drv, l.libErr
}

// initialized is library followed by cuInit(0), once, with
// CUDA_MODULE_LOADING=EAGER set first (see ModuleLoadingEnv).
func (l *loader) initialized() (*Driver, error) {
	drv, err := l.library()
	if err != nil {
		return nil, err
	}
	l.initOnce.Do(func() {
		forceEagerLoading()
		if err := drv.Init(0); err != nil {
			reason := fmt.Sprintf("%s loaded but cuInit failed", drv.Path())
			if v, verr := drv.DriverGetVersion(); verr == nil {
				reason = fmt.Sprintf("%s (driver supports CUDA %s) loaded but cuInit failed", drv.Path(), versionString(v))
			}
			if de, ok := err.(*DriverError); ok {
				reason += fmt.Sprintf(": %s (%d): %s", de.Name, de.Code, de.Message)
			} else {
				reason += ": " + err.Error()
			}
			l.initErr = unavailable(reason)
		}
	})
	if l.initErr != nil {
		return nil, l.initErr
	}
	return drv, nil
}

// Load loads the driver library ($RINGACTOR_CUDA_LIBRARY or libcuda.so.1)
// and calls cuInit(0), once per process, and returns the driver. Failures
// are *gpu.DeviceError of kind gpu.DeviceUnavailable with the reason: the
// library was not found (dlopen's message), lacks an entry point, or cuInit
// failed (the driver's error name and message).
func Load() (*Driver, error) { return processLoader().initialized() }

func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

//go:build !linux || !cgo

package nvml

import "github.com/ringactor/ringactor/gpu"

func open(path string) (*Monitor, error) {
	return nil, &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: Backend,
		Reason: "this build has no NVML binding (it needs linux and cgo); not loading " + path}
}

//go:build linux && cgo

package nvml

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/dl"
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/ringactor/ringactor/gpu"
)

// goNVML reads devices through go-nvml after a successful Init.
type goNVML struct{ lib gonvml.Interface }

func open(path string) (*Monitor, error) {
	return openWith(gonvml.New(gonvml.WithLibraryPath(path)), path)
}

// openWith calls lib.Init and nothing else unless it succeeds.
func openWith(lib gonvml.Interface, path string) (*Monitor, error) {
	ret, panicked := initLib(lib)
	if panicked != nil {
		return nil, unavailable(fmt.Sprintf("nvmlInit panicked: %v", panicked))
	}
	if ret != gonvml.SUCCESS {
		return nil, unavailable(initFailure(ret, path))
	}
	return &Monitor{src: goNVML{lib: lib}}, nil
}

// initLib calls lib.Init. go-nvml v0.13.4-0 returns ERROR_LIBRARY_NOT_FOUND
// rather than panicking when the library is missing; the recover covers a
// version that does not, and covers nothing but Init.
func initLib(lib gonvml.Interface) (ret gonvml.Return, panicked any) {
	defer func() { panicked = recover() }()
	return lib.Init(), nil
}

// initFailure explains a failed Init without calling into NVML (not even
// nvmlErrorString).
func initFailure(ret gonvml.Return, path string) string {
	if ret == gonvml.ERROR_LIBRARY_NOT_FOUND {
		// go-nvml drops dlopen's message; dlopen again for it.
		lib := dl.New(path, dl.RTLD_LAZY|dl.RTLD_LOCAL)
		if err := lib.Open(); err != nil {
			return fmt.Sprintf("%s not found: %v", path, err)
		}
		_ = lib.Close()
		return fmt.Sprintf("%s could not be loaded", path)
	}
	name, hint := returnName(ret)
	msg := fmt.Sprintf("nvmlInit failed: %s (%d)", name, int32(ret))
	if hint != "" {
		msg += ": " + hint
	}
	return msg
}

// returnName names the codes nvmlInit returns, with a hint where one
// helps, without calling NVML.
func returnName(ret gonvml.Return) (name, hint string) {
	switch ret {
	case gonvml.ERROR_UNINITIALIZED:
		return "NVML_ERROR_UNINITIALIZED", ""
	case gonvml.ERROR_INVALID_ARGUMENT:
		return "NVML_ERROR_INVALID_ARGUMENT", ""
	case gonvml.ERROR_NOT_SUPPORTED:
		return "NVML_ERROR_NOT_SUPPORTED", ""
	case gonvml.ERROR_NO_PERMISSION:
		return "NVML_ERROR_NO_PERMISSION", "no permission to open the NVIDIA device files"
	case gonvml.ERROR_DRIVER_NOT_LOADED:
		return "NVML_ERROR_DRIVER_NOT_LOADED", "the NVIDIA kernel driver is not loaded"
	case gonvml.ERROR_LIBRARY_NOT_FOUND:
		return "NVML_ERROR_LIBRARY_NOT_FOUND", ""
	case gonvml.ERROR_FUNCTION_NOT_FOUND:
		return "NVML_ERROR_FUNCTION_NOT_FOUND", "the library is older than go-nvml expects"
	case gonvml.ERROR_GPU_IS_LOST:
		return "NVML_ERROR_GPU_IS_LOST", ""
	case gonvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "libnvidia-ml and the kernel driver have different versions"
	case gonvml.ERROR_UNKNOWN:
		return "NVML_ERROR_UNKNOWN", ""
	}
	return "nvmlReturn_t", ""
}

func unavailable(reason string) error {
	return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: Backend, Reason: reason}
}

func (g goNVML) devices() ([]DeviceStats, error) {
	n, ret := g.lib.DeviceGetCount()
	if ret != gonvml.SUCCESS {
		return nil, fmt.Errorf("nvml: nvmlDeviceGetCount: %v", ret)
	}
	out := make([]DeviceStats, 0, n)
	for i := 0; i < n; i++ {
		dev, ret := g.lib.DeviceGetHandleByIndex(i)
		if ret != gonvml.SUCCESS {
			return nil, fmt.Errorf("nvml: nvmlDeviceGetHandleByIndex(%d): %v", i, ret)
		}
		s := DeviceStats{Index: i, MemoryTotal: -1, MemoryUsed: -1, UtilizationGPU: -1, TemperatureC: -1, PowerMilliwatts: -1}
		if name, ret := dev.GetName(); ret == gonvml.SUCCESS {
			s.Name = name
		}
		if mem, ret := dev.GetMemoryInfo(); ret == gonvml.SUCCESS {
			s.MemoryTotal, s.MemoryUsed = int64(mem.Total), int64(mem.Used)
		}
		if u, ret := dev.GetUtilizationRates(); ret == gonvml.SUCCESS {
			s.UtilizationGPU = int64(u.Gpu)
		}
		if t, ret := dev.GetTemperature(gonvml.TEMPERATURE_GPU); ret == gonvml.SUCCESS {
			s.TemperatureC = int64(t)
		}
		if p, ret := dev.GetPowerUsage(); ret == gonvml.SUCCESS {
			s.PowerMilliwatts = int64(p)
		}
		if m, ret := dev.GetComputeMode(); ret == gonvml.SUCCESS {
			s.ComputeMode = computeModeName(m)
		}
		if cur, _, ret := dev.GetMigMode(); ret == gonvml.SUCCESS {
			s.MIG = "disabled"
			if cur == gonvml.DEVICE_MIG_ENABLE {
				s.MIG = "enabled"
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// computeModeName names an NVML compute mode.
func computeModeName(m gonvml.ComputeMode) string {
	switch m {
	case gonvml.COMPUTEMODE_DEFAULT:
		return "default"
	case gonvml.COMPUTEMODE_EXCLUSIVE_THREAD:
		return "exclusive_thread"
	case gonvml.COMPUTEMODE_PROHIBITED:
		return "prohibited"
	case gonvml.COMPUTEMODE_EXCLUSIVE_PROCESS:
		return "exclusive_process"
	}
	return fmt.Sprintf("mode %d", int(m))
}

func (g goNVML) shutdown() error {
	if ret := g.lib.Shutdown(); ret != gonvml.SUCCESS {
		return fmt.Errorf("nvml: nvmlShutdown: %v", ret)
	}
	return nil
}

package devcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/nvml"
)

// MaxConnectionsEnv is the driver's CUDA_DEVICE_MAX_CONNECTIONS: the
// hardware work queues streams are multiplexed onto (default 8).
const MaxConnectionsEnv = "CUDA_DEVICE_MAX_CONNECTIONS"

// reportStep reports the device and driver and checks what ring kernels
// need of them.
var reportStep = Step{
	Name:    "report",
	Checks:  "device and driver: name, compute capability, SMs, memory, no kernel exec timeout, host memory mappable, stream-ordered allocator, module loading EAGER, NVRTC version and target, ring programs' image (CUBIN or PTX) loadable by the driver, one ring program loads, MIG, MPS and the compute mode",
	Timeout: 30 * time.Second,
	run:     runReport,
}

func runReport(ctx context.Context, e *Env) error {
	e.Progress("opening the backend")
	b, err := e.Backend()
	if err != nil {
		return err
	}
	r := b.Report()
	e.Set("library", r.LibraryPath)
	e.Set("driver_version", r.DriverVersionString())
	if len(r.Devices) == 0 {
		return fmt.Errorf("no device in the report: %v", r.Err)
	}
	d := r.Devices[0]
	e.Set("name", d.Name)
	e.Set("compute_capability", d.ComputeCapability.String())
	e.Set("sms", d.SMs)
	e.Set("memory_mib", d.TotalMem>>20)
	e.Set("backend", b.Name())
	var problems []string
	if !e.Sim() { // the simulated device's attributes are checked at open
		e.Set("kernel_exec_timeout", d.KernelExecTimeout)
		e.Set("can_map_host_memory", d.CanMapHostMemory)
		if d.KernelExecTimeout {
			problems = append(problems, "KernelExecTimeout is set (a display watchdog would kill persistent kernels)")
		}
		if !d.CanMapHostMemory {
			problems = append(problems, "CanMapHostMemory is false (ring kernels need mapped pinned memory)")
		}
	}
	if err := b.CheckPersistent(); err != nil {
		problems = append(problems, "persistent kernels refused: "+err.Error())
	}
	e.Set("stream_ordered_alloc", b.StreamOrderedAlloc())
	if !b.StreamOrderedAlloc() {
		problems = append(problems, "StreamOrderedAlloc() is false: every device allocation runs in a device epoch")
	}
	mode := "n/a (simulated device)"
	if !e.Sim() {
		mode, err = loadingMode()
		switch {
		case errors.Is(err, cuda.ErrNoLoadingMode):
			mode = "EAGER (driver before CUDA 12.0)"
		case err != nil:
			problems = append(problems, "module loading mode: "+err.Error())
		case mode != "EAGER":
			problems = append(problems, fmt.Sprintf("module loading mode %s: %s=EAGER was not honoured", mode, cuda.ModuleLoadingEnv))
		}
	}
	e.Set("module_loading", mode)
	conns := os.Getenv(MaxConnectionsEnv)
	if conns == "" {
		conns = "8 (unset: the driver's default)"
	}
	e.Set("max_connections", conns)
	if nv, err := cuda.LoadNVRTC(); err != nil {
		problems = append(problems, "NVRTC: "+err.Error())
	} else {
		major, minor := nv.Version()
		e.Set("nvrtc", fmt.Sprintf("%d.%d", major, minor))
		e.Set("nvrtc_library", nv.Path())
		e.Set("nvrtc_archs", nv.SupportedArchs())
		arch, err := b.NVRTCArch()
		if err != nil {
			problems = append(problems, "NVRTC target: "+err.Error())
		}
		e.Set("nvrtc_target", arch)
		e.Set("nvrtc_cubin", nv.HasCUBIN())
		// What ring programs are compiled into (a CUBIN for sm_90 on an
		// H100 with a current NVRTC: no JIT in the device epoch), checked
		// against the driver's version.
		target, err := b.RingProgramTarget()
		if err != nil {
			problems = append(problems, "ring program target: "+err.Error())
		}
		e.Set("ring_program_target", target.Arch)
		e.Set("ring_program_image", target.Image)
	}
	if log := strings.TrimSpace(b.JITLog().Info); log != "" {
		e.Set("oneshot_jit_log", clip(log, 4000))
	}
	e.Progress("loading one ring program")
	start := time.Now()
	if src, err := saxpyProgram(); err != nil {
		problems = append(problems, "ring program source: "+err.Error())
	} else if _, err := b.LoadRingProgram(ctx, src); err != nil {
		problems = append(problems, "loading a ring program: "+err.Error())
	} else {
		e.Set("ring_program_load_ms", float64(time.Since(start).Microseconds())/1e3)
	}
	e.Set("mps", mpsState())
	if !e.Sim() {
		if devs, err := nvml.Snapshot(); err != nil {
			e.Set("nvml", err.Error())
		} else if len(devs) > 0 {
			e.Set("compute_mode", devs[0].ComputeMode)
			e.Set("mig", devs[0].MIG)
			if devs[0].MIG == "enabled" {
				problems = append(problems, "MIG is enabled: a MIG instance has a fraction of the SMs the profile counts")
			}
			if devs[0].ComputeMode == "prohibited" {
				problems = append(problems, "the compute mode is prohibited")
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// mpsState says whether this process would run under MPS: its pipe
// directory (CUDA_MPS_PIPE_DIRECTORY, default /tmp/nvidia-mps) holds the
// control daemon's socket.
func mpsState() string {
	dir := os.Getenv("CUDA_MPS_PIPE_DIRECTORY")
	if dir == "" {
		dir = "/tmp/nvidia-mps"
	}
	if _, err := os.Stat(filepath.Join(dir, "control")); err == nil {
		return "active (" + dir + ")"
	}
	return "not running"
}

// loadingMode reads the driver's module loading mode back.
func loadingMode() (string, error) {
	drv, err := cuda.Load()
	if err != nil {
		return "", err
	}
	return drv.ModuleGetLoadingMode()
}

// clip shortens s to at most n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/nvml"
)

// Help text of the devices command.
const (
	devicesSynopsis    = "[-json]"
	devicesDescription = `List every compute backend of this machine with its state: the CPU (cores
and GOMAXPROCS), CUDA (the driver library, its version and each device, or
the exact reason none is usable), NVRTC (run-time compilation of CUDA C
kernels, or why it is missing) and NVML (device telemetry, or why it is
off). It exits 0 whatever it finds.
`
)

// devicesCommand is the "devices" subcommand.
var devicesCommand = command{
	name:    "devices",
	summary: "list the CPU, CUDA devices (or why none is usable) and NVML state",
	run:     runDevicesCommand,
}

// devicesReport is what `ringactor devices --json` prints.
type devicesReport struct {
	CPU struct {
		Arch       string `json:"arch"`
		Cores      int    `json:"cores"`
		GOMAXPROCS int    `json:"gomaxprocs"`
	} `json:"cpu"`
	CUDA struct {
		Usable        bool              `json:"usable"`
		LibraryLoaded bool              `json:"library_loaded"`
		LibraryPath   string            `json:"library_path,omitempty"`
		DriverVersion string            `json:"driver_version,omitempty"`
		Devices       []cuda.DeviceInfo `json:"devices"`
		Reason        string            `json:"reason,omitempty"`
	} `json:"cuda"`
	NVRTC struct {
		Usable      bool   `json:"usable"`
		LibraryPath string `json:"library_path,omitempty"`
		Version     string `json:"version,omitempty"`
		Reason      string `json:"reason,omitempty"`
	} `json:"nvrtc"`
	NVML struct {
		Usable  bool               `json:"usable"`
		Devices []nvml.DeviceStats `json:"devices"`
		Reason  string             `json:"reason,omitempty"`
	} `json:"nvml"`
}

func runDevicesCommand(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("devices", devicesSynopsis, devicesDescription, stderr)
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(fs, "devices takes no arguments, got %q", fs.Args())
	}
	r := probeDevices()
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(r); err != nil {
			return exitFailure
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "cpu   %s, %d cores, GOMAXPROCS %d: usable\n", r.CPU.Arch, r.CPU.Cores, r.CPU.GOMAXPROCS)
	switch {
	case r.CUDA.Usable:
		fmt.Fprintf(stdout, "cuda  %s (driver CUDA %s): %d device(s)\n", r.CUDA.LibraryPath, r.CUDA.DriverVersion, len(r.CUDA.Devices))
		for _, d := range r.CUDA.Devices {
			fmt.Fprintf(stdout, "      %d: %s, sm_%d%d, %d SMs, %d MiB, kernel exec timeout %v\n", d.Index, d.Name,
				d.ComputeCapability.Major, d.ComputeCapability.Minor, d.SMs, d.TotalMem>>20, d.KernelExecTimeout)
		}
	default:
		fmt.Fprintf(stdout, "cuda  not usable: %s\n", r.CUDA.Reason)
	}
	if r.NVRTC.Usable {
		fmt.Fprintf(stdout, "nvrtc %s (NVRTC %s): CUDA C kernels can be registered from source\n", r.NVRTC.LibraryPath, r.NVRTC.Version)
	} else {
		fmt.Fprintf(stdout, "nvrtc not usable: %s\n", r.NVRTC.Reason)
	}
	if r.NVML.Usable {
		fmt.Fprintf(stdout, "nvml  %d device(s)\n", len(r.NVML.Devices))
		for _, d := range r.NVML.Devices {
			fmt.Fprintf(stdout, "      %d: %s, memory %d/%d MiB, utilisation %d%%, %d °C, %.1f W\n", d.Index, d.Name,
				d.MemoryUsed>>20, d.MemoryTotal>>20, d.UtilizationGPU, d.TemperatureC, float64(d.PowerMilliwatts)/1000)
		}
	} else {
		fmt.Fprintf(stdout, "nvml  not usable: %s\n", r.NVML.Reason)
	}
	return exitOK
}

// probeDevices asks every backend what it has.
func probeDevices() devicesReport {
	var r devicesReport
	r.CPU.Arch, r.CPU.Cores, r.CPU.GOMAXPROCS = runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0)
	p := cuda.Probe()
	r.CUDA.LibraryLoaded, r.CUDA.LibraryPath, r.CUDA.DriverVersion = p.LibraryLoaded, p.LibraryPath, p.DriverVersionString()
	r.CUDA.Devices = p.Devices
	r.CUDA.Usable = p.Err == nil && len(p.Devices) > 0
	if p.Err != nil {
		r.CUDA.Reason = p.Err.Error()
	}
	if n, err := cuda.LoadNVRTC(); err != nil {
		r.NVRTC.Reason = err.Error()
	} else {
		major, minor := n.Version()
		r.NVRTC.Usable, r.NVRTC.LibraryPath, r.NVRTC.Version = true, n.Path(), fmt.Sprintf("%d.%d", major, minor)
	}
	devs, err := nvml.Snapshot()
	r.NVML.Usable, r.NVML.Devices = err == nil, devs
	if err != nil {
		r.NVML.Reason = err.Error()
	}
	return r
}

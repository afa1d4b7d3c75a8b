// Package cuda is the CUDA backend's binding to the NVIDIA driver API.
//
// The binding loads libcuda.so.1 with dlopen at run time (a small cgo layer
// of its own, in the manner of go-nvml) instead of linking it, so every build
// of the framework contains the CUDA backend, no CUDA SDK is needed to build,
// and the same binary runs on machines with and without a GPU. Nothing
// happens at package initialisation: the library is loaded on the first call
// of [Load], [Probe] or [NewContext], once per process, and a missing
// library, a missing symbol or a failing cuInit is reported as a
// *gpu.DeviceError of kind gpu.DeviceUnavailable (errors.Is-equal to
// gpu.ErrDeviceNotAvailable) so the orchestrator can fall back to the CPU.
// The package never panics and never exits the process on such a failure.
//
// The environment variable RINGACTOR_CUDA_LIBRARY, when set, names the
// library to load instead of "libcuda.so.1" (a file name or a path).
//
// # Driver calls
//
// [Driver] exposes thin wrappers of the driver entry points the backend
// uses; each returns a *[DriverError] built from cuGetErrorName and
// cuGetErrorString. Calls that need a current context (modules, streams,
// memory, launches) must run on the OS thread of a [Context], inside
// [Context.Do].
//
// # Threads
//
// A CUDA context is current per OS thread. A [Context] owns one goroutine
// locked to one OS thread with the device's primary context current on it,
// and runs every function passed to [Context.Do] there. Each Do is one
// hand-off between goroutines, so hot paths batch their driver calls into
// one Do (enqueue copies, launch, record an event) rather than one Do per
// call.
//
// # Simulated devices
//
// The package links no simulator. A [Backend] runs on the driver
// ([NewBackend]) or on a [HostDevice] ([NewHostBackend]): package
// gpu/cuda/simdevice is the simulated device (over the C++ simulator of
// gpu/cuda/hostsim), imported by tests and by the commands that offer
// simulated devices, never by this package.
//
// # Where things are
//
// The driver binding: driver*.go, driver_cgo.c, loader.go, context.go,
// types.go, errors.go, probe.go, moduleloading.go, loadingmode*.go,
// nvrtc*.go; the driver API's types themselves (handles, Dim3,
// DeviceAttribute and its Attr constants, Result, DriverError, DeviceAPI)
// are declared in gpu/cuda/internal/driverapi and re-exported here. The device
// a backend opens and the one-shot compute backend: backend*.go,
// backends.go, device*.go, module_load.go, kernels_oneshot.go, runptx.go,
// ptx.go, profile.go, hostdevice.go; the open device itself (attributes,
// stream, staging, the allocator, batches, modules, the pinned arena and
// the device epochs' registry) is gpu/cuda/internal/devcore's Device. The
// device ring runtime (ring programs, ring kernels, program grids and
// mailboxes, the rings' side of device epochs) is package gpu/cuda/internal/ringrt;
// ring_runtime.go and epoch.go forward the Backend's ring methods to it
// and name its types (RingKernel is ringrt.Kernel). The device sources
// (loop templates, one-shot kernels) are in kernels/, whose Go package
// embeds what ringrt generates programs from.
//
// The cgo layer builds on linux with cgo enabled; elsewhere the package
// compiles to a stub whose loader always reports DeviceUnavailable.
package cuda

// Package hostsim runs the CUDA kernel sources of gpu/cuda/kernels on the
// host: the same .cu files, compiled by the C++ compiler through
// kernels/host_shim.h (CUDA threads become std::threads of one block,
// __syncthreads a std::barrier, system-scope atomics std::atomic_ref), so
// go test exercises the code a GPU would run, on machines without one.
//
// A device ring kernel is a ring program (gpu/cuda's RingProgramSource:
// the loop template kernels/ring_loop.cuh around a handler): its host
// source is built into a shared library by [BuildProgram] and run by
// [Device.LaunchProgram], each loop on host threads of its own, driven
// through the same protocol as on a GPU (ring.ControlBlock for the control
// words, ring.SlotRing for the slot rings). The one-shot kernels run through
// [Elementwise], [Reduce], [MatMul] and [Blur], or by entry name through
// a simulated [Device] (C-heap device memory, launches with the parameter
// slots of cuLaunchKernel), which gpu/cuda's tests put behind the backend
// in place of the driver.
//
// It needs cgo and a C++20 compiler (linux); without them the package is
// empty.
package hostsim

// kernels_stamp.h holds a hash of the kernel sources, so editing them
// changes a file of this package and cgo rebuilds it (TestKernelStamp fails
// until it is regenerated).
//
//go:generate sh -c "cd .. && printf '#define RC_KERNELS_SHA256 \"%s\"\\n' $(sha256sum abi.h kernels/host_shim.h kernels/oneshot.cu kernels/ring_abi_gen.h | sha256sum | cut -c1-64) > hostsim/kernels_stamp.h"

// Package simdevice is the simulated CUDA device's Go side: a
// cuda.HostDevice over the C++ simulator of package gpu/cuda/hostsim
// (host-compiled kernels on host threads, its memory the C heap, the
// hazard, residency and hardware-queue model), and the cuda.Backend
// constructors on it (NewBackend, NewBackends, NewBackendOn).
//
// Package cuda links no simulator: tests, `ringactor serve --sim-devices`,
// `ringactor selftest`'s simulated mode and the benchmarks import this
// package for simulated devices; a program that uses only real devices
// does not, and its build carries neither this package nor hostsim.
//
// It builds on linux with cgo (the simulator is C++); elsewhere the package
// is empty.
package simdevice

// Package gpu is ringactor's compute API: unified buffers and their pool,
// dtypes and shapes, kernel specs and the registry, the Backend interface
// that the CPU backend (gpu/cpu) and the CUDA backend (gpu/cuda) implement,
// backend selection, and the error hierarchy of compute failures.
//
// The ring protocol (rings, control block, persistent loop, wait
// strategies) lives in gpu/ring; the names it had here (Ring, NewRing,
// ControlBlock, NewControlBlock, Stats, CapacityError, ValidCapacity,
// MaxRingCapacity, GateOpen, GateClosed) are deprecated aliases.
package gpu

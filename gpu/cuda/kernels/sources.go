// Package kernels holds the device sources of the CUDA backend that Go
// code embeds: the ring loop and grid loop templates every device ring
// program is generated from (package gpu/cuda/internal/ringrt), the ring ABI
// header generated from gpu/ring's types (go generate ./gpu/ring) and the
// simulated device's shim. The one-shot kernels (oneshot.cu, its PTX)
// live here too, embedded by gpu/cuda; INSTALL.txt says how to build them.
package kernels

import _ "embed" // the device sources

var (
	// RingABI is ring_abi_gen.h: the C layout of gpu/ring's types.
	//go:embed ring_abi_gen.h
	RingABI string
	// RingLoop is ring_loop.cuh: the loop of a ring kernel of its own.
	//go:embed ring_loop.cuh
	RingLoop string
	// GridLoop is grid_loop.cuh: the loop of a program's persistent grid
	// of mailboxes.
	//go:embed grid_loop.cuh
	GridLoop string
	// HostShim is host_shim.h: CUDA's built-ins on host threads, for the
	// host build of a ring program on the simulated device.
	//go:embed host_shim.h
	HostShim string
)

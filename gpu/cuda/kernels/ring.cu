// The persistent ring kernel's entry point (see ring_kernel.cuh).
// go generate ./gpu/cuda compiles this file to ring.ptx.

#include "ring_kernel.cuh"

extern "C" __global__ void rc_ring_kernel(rc_control_block *cb, rc_ring_header *in, rc_ring_header *out) {
	__shared__ rc_loop_state state;
	__shared__ double red[RC_RING_MAX_BLOCK];
	rc_ring_loop(cb, in, out, &state, red);
}

// C mirrors of the Go structs that host and device share in mapped pinned
// memory. Device code (kernels/*.cu) and the host-compiled kernel tests
// include this header; layout_cgo.go checks every struct here against its Go
// counterpart (size and each field's offset) in go test.

#ifndef RINGACTOR_CUDA_ABI_H
#define RINGACTOR_CUDA_ABI_H

#include <stdint.h>

#define RC_CACHE_LINE 64

// rc_padded_u64 mirrors gpu.paddedUint64: one 64-bit word alone on its
// cache line.
typedef struct rc_padded_u64 {
	uint64_t v;
	uint8_t pad[RC_CACHE_LINE - 8];
} rc_padded_u64;

// rc_control_block mirrors gpu.ControlBlock, field for field.
typedef struct rc_control_block {
	rc_padded_u64 gate;           // GateOpen (1) or GateClosed (0); host -> kernel
	rc_padded_u64 terminate;      // non-zero asks the loop to exit; host -> kernel
	rc_padded_u64 terminated_ack; // non-zero once the loop has exited; kernel -> host
	rc_padded_u64 processed;
	rc_padded_u64 errors;
	rc_padded_u64 dropped;
	rc_padded_u64 heartbeat;
	rc_padded_u64 latency_min;
	rc_padded_u64 latency_max;
	rc_padded_u64 latency_sum;
	rc_padded_u64 latency_count;
	rc_padded_u64 restarts;
} rc_control_block;

#endif

// The C layout shared by the persistent ring kernel (ring_kernel.cuh) and the
// host: the control block, the ring header, the slot header and the
// protocol's constants (generated from gpu/ring's Go types into
// ring_abi_gen.h by go generate ./gpu/ring), and here the fixed-layout
// payloads of the built-in handlers. Everything here lives in pinned host memory mapped into
// the device (cuMemHostAlloc PORTABLE|DEVICEMAP), so it must have the same
// layout for nvcc, g++ and Go; gpu/cuda/hostsim checks every struct against
// its Go mirror (unsafe.Offsetof vs offsetof through cgo).
//
// Ring memory: one rc_ring_header (192 bytes) immediately followed by
// capacity slots of slot_size bytes each. The slot of index x is at
// (char *)(hdr + 1) + (x & (capacity - 1)) * slot_size. A slot is an
// rc_slot_header (32 bytes) followed by the payload (slot_size - 32 bytes).
// Indices grow monotonically; capacity is a power of two; slot_size is a
// multiple of 16. A message whose payload struct does not fit its slot is
// answered with RC_STATUS_BAD_LENGTH; RC_SLOT_SIZE_MIN fits every built-in
// payload.
//
// Protocol (single producer, single consumer per ring): the producer writes
// the slot, then publishes tail with a release store; the consumer
// acquire-loads tail, reads the slot, then release-stores head. No
// read-modify-write is shared between host and device.

#ifndef RINGACTOR_RING_ABI_H
#define RINGACTOR_RING_ABI_H

// rc_padded_u64, rc_control_block, rc_ring_header, rc_slot_header,
// RC_TERMINATE_*, RC_TERMINATED*, RC_FLAG_*, RC_STATUS_*.
#include "ring_abi_gen.h"

// Built-in message kinds (type_id). The backend maps the registered message
// types of the named kernels onto these.
#define RC_MSG_ADD 1u        // rc_vec_msg   -> rc_vec_reply: a + b
#define RC_MSG_MUL 2u        // rc_vec_msg   -> rc_vec_reply: a * b
#define RC_MSG_SCALE 3u      // rc_unary_msg -> rc_vec_reply: param * x
#define RC_MSG_RELU 4u       // rc_unary_msg -> rc_vec_reply: max(x, 0) (NaN stays NaN)
#define RC_MSG_LEAKY_RELU 5u // rc_unary_msg -> rc_vec_reply: x > 0 ? x : param * x
#define RC_MSG_SUM 6u        // rc_reduce_msg -> rc_scalar_reply (accumulated in double)
#define RC_MSG_MIN 7u        // rc_reduce_msg -> rc_scalar_reply (NaN if any NaN; n >= 1)
#define RC_MSG_MAX 8u        // rc_reduce_msg -> rc_scalar_reply (NaN if any NaN; n >= 1)
#define RC_MSG_SPMV 9u       // rc_spmv_msg  -> rc_spmv_reply: y = A x, A in CSR

// Limits of the fixed payloads (float32 data).
#define RC_VEC_MAX 256     // elements of a vector message
#define RC_SPMV_MAX_ROWS 64
#define RC_SPMV_MAX_COLS 128
#define RC_SPMV_MAX_NNZ 256

typedef struct rc_vec_msg {
	uint32_t n; // 0..RC_VEC_MAX
	uint32_t reserved;
	float a[RC_VEC_MAX];
	float b[RC_VEC_MAX];
} rc_vec_msg;

typedef struct rc_unary_msg {
	uint32_t n;  // 0..RC_VEC_MAX
	float param; // scale factor or leaky-relu slope; unused by relu
	float x[RC_VEC_MAX];
} rc_unary_msg;

typedef struct rc_reduce_msg {
	uint32_t n; // 0..RC_VEC_MAX (>= 1 for min/max)
	uint32_t reserved;
	float x[RC_VEC_MAX];
} rc_reduce_msg;

typedef struct rc_spmv_msg {
	uint32_t rows; // 0..RC_SPMV_MAX_ROWS
	uint32_t cols; // 0..RC_SPMV_MAX_COLS
	uint32_t nnz;  // 0..RC_SPMV_MAX_NNZ, == row_ptr[rows]
	uint32_t reserved;
	int32_t row_ptr[RC_SPMV_MAX_ROWS + 1]; // row_ptr[0] == 0, non-decreasing
	int32_t col_idx[RC_SPMV_MAX_NNZ];      // each in [0, cols)
	float values[RC_SPMV_MAX_NNZ];
	float x[RC_SPMV_MAX_COLS];
} rc_spmv_msg;

typedef struct rc_vec_reply {
	uint32_t n;
	uint32_t reserved;
	float y[RC_VEC_MAX];
} rc_vec_reply;

typedef struct rc_scalar_reply {
	uint32_t n;
	uint32_t reserved;
	double value; // sum in double; min/max of float32 data, widened
} rc_scalar_reply;

typedef struct rc_spmv_reply {
	uint32_t rows;
	uint32_t reserved;
	float y[RC_SPMV_MAX_ROWS];
} rc_spmv_reply;

// A slot size that fits every payload above (the largest, rc_spmv_msg, is
// 2836 bytes) plus the 32-byte slot header.
#define RC_SLOT_SIZE_MIN 4096u

#endif

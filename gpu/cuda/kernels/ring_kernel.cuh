// The persistent ring kernel: one block that polls its input ring in mapped
// pinned host memory, dispatches each slot to a __device__ handler and
// writes the reply to its output ring, until the host asks it to terminate.
// Layouts and protocol: ring_abi.h. Compiled by nvcc into ring.ptx
// (ring.cu) and by g++ for the host through host_shim.h (gpu/cuda/hostsim).
//
// Launch: grid = 1 block (the loop is block-local: no grid-wide sync), one
// dimension, blockDim.x a power of two in [1, RC_RING_MAX_BLOCK]; any other
// shape makes the kernel exit at once with terminated_ack =
// RC_TERMINATED_BAD_LAUNCH. A small block keeps many ring kernels
// co-resident; give each its own stream.
//
// KERNEL_EXEC_TIMEOUT is a host concern: a persistent kernel never returns,
// so on a device whose CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT is 1 (a
// display watchdog) the driver would kill it after a few seconds. The
// backend reads that attribute at startup and refuses persistent launches
// there (one-shot kernels still run); nothing in device code can detect it.
//
// Word ownership (gpu/ring/control.go): the host writes gate and terminate (and
// dropped, which the admitting side counts); thread 0 of this kernel writes
// terminated_ack, processed, errors, heartbeat and the latency words, with
// stores of values it computes itself (relaxed atomic stores: never a
// read-modify-write shared with the host, which PCIe does not provide).

#ifndef RINGACTOR_RING_KERNEL_CUH
#define RINGACTOR_RING_KERNEL_CUH

#ifdef __CUDACC__
#include <cuda/atomic>
#else
#include "host_shim.h"
#endif

#include "ring_abi.h"

#define RC_RING_MAX_BLOCK 256        // largest blockDim.x of the persistent kernel
#define RC_BACKOFF_MIN_NS 64u        // first idle sleep
#define RC_BACKOFF_MAX_NS 20000u     // idle sleeps double up to this (20 µs)

// Loop commands thread 0 broadcasts through shared memory.
#define RC_CMD_IDLE 0u
#define RC_CMD_HANDLE 1u
#define RC_CMD_EXIT 2u

typedef unsigned long long rc_u64;

// System-scope accessors of the 64-bit words shared with the host.
__device__ __forceinline__ uint64_t rc_load_acquire(const uint64_t *p) {
	cuda::atomic_ref<rc_u64, cuda::thread_scope_system> r(*(rc_u64 *)p);
	return r.load(cuda::std::memory_order_acquire);
}

__device__ __forceinline__ uint64_t rc_load_relaxed(const uint64_t *p) {
	cuda::atomic_ref<rc_u64, cuda::thread_scope_system> r(*(rc_u64 *)p);
	return r.load(cuda::std::memory_order_relaxed);
}

__device__ __forceinline__ void rc_store_release(uint64_t *p, uint64_t v) {
	cuda::atomic_ref<rc_u64, cuda::thread_scope_system> r(*(rc_u64 *)p);
	r.store(v, cuda::std::memory_order_release);
}

__device__ __forceinline__ void rc_store_relaxed(uint64_t *p, uint64_t v) {
	cuda::atomic_ref<rc_u64, cuda::thread_scope_system> r(*(rc_u64 *)p);
	r.store(v, cuda::std::memory_order_relaxed);
}

// rc_now_ns: %globaltimer on the device (nanoseconds; on Linux drivers it
// tracks the host's unix time, to be confirmed per machine: see the H100
// runbook), system_clock on the host.
__device__ __forceinline__ uint64_t rc_now_ns() {
#if defined(__CUDA_ARCH__)
	rc_u64 t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
#elif defined(RC_HOST_SIM)
	return ::rc_host::now_ns();
#else
	return 0;
#endif
}

__device__ __forceinline__ rc_slot_header *rc_slot(rc_ring_header *r, uint64_t index) {
	return (rc_slot_header *)((char *)(r + 1) + (index & (r->capacity - 1)) * r->slot_size);
}

// NaN-propagating min and max (a NaN anywhere makes the result NaN).
__device__ __forceinline__ double rc_min_nan(double a, double b) {
	return a != a ? a : (b != b ? b : (b < a ? b : a));
}

__device__ __forceinline__ double rc_max_nan(double a, double b) {
	return a != a ? a : (b != b ? b : (b > a ? b : a));
}

// rc_block_reduce combines every thread's v with op through red
// (blockDim.x doubles of shared memory); every thread of the block must call
// it and gets the result. blockDim.x must be a power of two.
template <class Op>
__device__ double rc_block_reduce(double v, double *red, Op op) {
	const unsigned tid = threadIdx.x;
	red[tid] = v;
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
		if (tid < s) {
			red[tid] = op(red[tid], red[tid + s]);
		}
		__syncthreads();
	}
	const double r = red[0];
	__syncthreads();
	return r;
}

struct rc_op_sum {
	__device__ double operator()(double a, double b) const { return a + b; }
};
struct rc_op_min {
	__device__ double operator()(double a, double b) const { return rc_min_nan(a, b); }
};
struct rc_op_max {
	__device__ double operator()(double a, double b) const { return rc_max_nan(a, b); }
};

// Handlers. Every thread of the block calls the handler of the slot; the
// validation reads the same request bytes in every thread, so all threads
// take the same branch (required around rc_block_reduce's barriers). Each
// returns an RC_STATUS_* and writes the reply payload.

__device__ uint32_t rc_handle_vec(uint32_t type, const rc_vec_msg *m, rc_vec_reply *r) {
	const uint32_t n = m->n;
	if (n > RC_VEC_MAX) {
		return RC_STATUS_BAD_ARGS;
	}
	for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
		r->y[i] = type == RC_MSG_ADD ? m->a[i] + m->b[i] : m->a[i] * m->b[i];
	}
	if (threadIdx.x == 0) {
		r->n = n;
		r->reserved = 0;
	}
	return RC_STATUS_OK;
}

__device__ uint32_t rc_handle_unary(uint32_t type, const rc_unary_msg *m, rc_vec_reply *r) {
	const uint32_t n = m->n;
	if (n > RC_VEC_MAX) {
		return RC_STATUS_BAD_ARGS;
	}
	const float p = m->param;
	for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
		const float x = m->x[i];
		float y;
		switch (type) {
		case RC_MSG_SCALE:
			y = p * x;
			break;
		case RC_MSG_RELU:
			y = x < 0.0f ? 0.0f : x; // NaN and -0 pass through
			break;
		default: // RC_MSG_LEAKY_RELU
			y = x > 0.0f ? x : p * x;
			break;
		}
		r->y[i] = y;
	}
	if (threadIdx.x == 0) {
		r->n = n;
		r->reserved = 0;
	}
	return RC_STATUS_OK;
}

__device__ uint32_t rc_handle_reduce(uint32_t type, const rc_reduce_msg *m, rc_scalar_reply *r, double *red) {
	const uint32_t n = m->n;
	if (n > RC_VEC_MAX || (n == 0 && type != RC_MSG_SUM)) {
		return RC_STATUS_BAD_ARGS;
	}
	double v;
	if (type == RC_MSG_SUM) {
		double acc = 0.0;
		for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
			acc += (double)m->x[i];
		}
		v = rc_block_reduce(acc, red, rc_op_sum());
	} else if (type == RC_MSG_MIN) {
		double acc = (double)m->x[0];
		for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
			acc = rc_min_nan(acc, (double)m->x[i]);
		}
		v = rc_block_reduce(acc, red, rc_op_min());
	} else {
		double acc = (double)m->x[0];
		for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
			acc = rc_max_nan(acc, (double)m->x[i]);
		}
		v = rc_block_reduce(acc, red, rc_op_max());
	}
	if (threadIdx.x == 0) {
		r->n = n;
		r->reserved = 0;
		r->value = type == RC_MSG_SUM ? (double)(float)v : v; // float32 result, as cpu.Sum[float32]
	}
	return RC_STATUS_OK;
}

__device__ uint32_t rc_handle_spmv(const rc_spmv_msg *m, rc_spmv_reply *r) {
	const uint32_t rows = m->rows, cols = m->cols, nnz = m->nnz;
	if (rows > RC_SPMV_MAX_ROWS || cols > RC_SPMV_MAX_COLS || nnz > RC_SPMV_MAX_NNZ) {
		return RC_STATUS_BAD_ARGS;
	}
	if (m->row_ptr[0] != 0 || m->row_ptr[rows] != (int32_t)nnz) {
		return RC_STATUS_BAD_ARGS;
	}
	for (uint32_t i = 1; i <= rows; i++) {
		if (m->row_ptr[i] < m->row_ptr[i - 1]) {
			return RC_STATUS_BAD_ARGS;
		}
	}
	for (uint32_t j = 0; j < nnz; j++) {
		if (m->col_idx[j] < 0 || (uint32_t)m->col_idx[j] >= cols) {
			return RC_STATUS_BAD_ARGS;
		}
	}
	for (uint32_t i = threadIdx.x; i < rows; i += blockDim.x) {
		double acc = 0.0;
		for (int32_t j = m->row_ptr[i]; j < m->row_ptr[i + 1]; j++) {
			acc += (double)m->values[j] * (double)m->x[m->col_idx[j]];
		}
		r->y[i] = (float)acc;
	}
	if (threadIdx.x == 0) {
		r->rows = rows;
		r->reserved = 0;
	}
	return RC_STATUS_OK;
}

// rc_fits checks the request length and that request and reply fit their
// slots; *reply_len gets the reply's payload size.
__device__ __forceinline__ bool rc_fits(const rc_slot_header *req, uint64_t req_size, uint64_t rep_size,
					uint64_t in_slot, uint64_t out_slot, uint32_t *reply_len) {
	*reply_len = (uint32_t)rep_size;
	return req->length == req_size && sizeof(rc_slot_header) + req_size <= in_slot &&
	       sizeof(rc_slot_header) + rep_size <= out_slot;
}

// rc_dispatch runs the handler of req's type and returns its status;
// *reply_len is the reply payload size (0 on error).
__device__ uint32_t rc_dispatch(const rc_slot_header *req, rc_slot_header *rep, uint64_t in_slot, uint64_t out_slot,
				double *red, uint32_t *reply_len) {
	const void *in = (const void *)(req + 1);
	void *out = (void *)(rep + 1);
	const uint32_t type = req->type_id;
	uint32_t status;
	switch (type) {
	case RC_MSG_ADD:
	case RC_MSG_MUL:
		if (!rc_fits(req, sizeof(rc_vec_msg), sizeof(rc_vec_reply), in_slot, out_slot, reply_len)) {
			status = RC_STATUS_BAD_LENGTH;
			break;
		}
		status = rc_handle_vec(type, (const rc_vec_msg *)in, (rc_vec_reply *)out);
		break;
	case RC_MSG_SCALE:
	case RC_MSG_RELU:
	case RC_MSG_LEAKY_RELU:
		if (!rc_fits(req, sizeof(rc_unary_msg), sizeof(rc_vec_reply), in_slot, out_slot, reply_len)) {
			status = RC_STATUS_BAD_LENGTH;
			break;
		}
		status = rc_handle_unary(type, (const rc_unary_msg *)in, (rc_vec_reply *)out);
		break;
	case RC_MSG_SUM:
	case RC_MSG_MIN:
	case RC_MSG_MAX:
		if (!rc_fits(req, sizeof(rc_reduce_msg), sizeof(rc_scalar_reply), in_slot, out_slot, reply_len)) {
			status = RC_STATUS_BAD_LENGTH;
			break;
		}
		status = rc_handle_reduce(type, (const rc_reduce_msg *)in, (rc_scalar_reply *)out, red);
		break;
	case RC_MSG_SPMV:
		if (!rc_fits(req, sizeof(rc_spmv_msg), sizeof(rc_spmv_reply), in_slot, out_slot, reply_len)) {
			status = RC_STATUS_BAD_LENGTH;
			break;
		}
		status = rc_handle_spmv((const rc_spmv_msg *)in, (rc_spmv_reply *)out);
		break;
	default:
		status = RC_STATUS_UNKNOWN_TYPE;
		break;
	}
	if (status != RC_STATUS_OK) {
		*reply_len = 0;
	}
	return status;
}

// rc_loop_state is what thread 0 broadcasts to the block each iteration.
struct rc_loop_state {
	uint64_t cmd;
	uint64_t in_index;
	uint64_t out_index;
};

// rc_ring_loop is the persistent loop. cb, in and out are device pointers
// of mapped pinned host memory (or plain pointers on the host). The loop
// resumes from the rings' indices and the control block's counters, so a
// relaunch after a restart continues where the last one stopped.
__device__ void rc_ring_loop(rc_control_block *cb, rc_ring_header *in, rc_ring_header *out, rc_loop_state *s,
			     double *red) {
	const unsigned tid = threadIdx.x;
	const unsigned nt = blockDim.x;
	if (gridDim.x * gridDim.y * gridDim.z != 1 || blockDim.y * blockDim.z != 1 || nt > RC_RING_MAX_BLOCK ||
	    (nt & (nt - 1)) != 0) {
		if (tid == 0 && blockIdx.x + blockIdx.y + blockIdx.z == 0) {
			rc_store_release(&cb->terminated_ack.v, RC_TERMINATED_BAD_LAUNCH);
		}
		return;
	}

	// Thread 0's private copies of the words it alone writes.
	uint64_t in_head = 0, out_tail = 0, processed = 0, errors = 0;
	uint64_t lat_min = 0, lat_max = 0, lat_sum = 0, lat_count = 0;
	unsigned backoff = RC_BACKOFF_MIN_NS;
	if (tid == 0) {
		in_head = rc_load_relaxed(&in->head.v);
		out_tail = rc_load_relaxed(&out->tail.v);
		processed = rc_load_relaxed(&cb->processed.v);
		errors = rc_load_relaxed(&cb->errors.v);
		lat_min = rc_load_relaxed(&cb->latency_min.v);
		lat_max = rc_load_relaxed(&cb->latency_max.v);
		lat_sum = rc_load_relaxed(&cb->latency_sum.v);
		lat_count = rc_load_relaxed(&cb->latency_count.v);
		rc_store_relaxed(&cb->heartbeat.v, rc_now_ns());
	}

	for (;;) {
		if (tid == 0) {
			uint64_t cmd = RC_CMD_IDLE;
			const uint64_t term = rc_load_acquire(&cb->terminate.v);
			const uint64_t gate = rc_load_acquire(&cb->gate.v);
			const bool pending = rc_load_acquire(&in->tail.v) != in_head; // acquire: the slot's bytes
			if (term == RC_TERMINATE_NOW || (term != RC_TERMINATE_NONE && !pending)) {
				cmd = RC_CMD_EXIT;
			} else if (pending && (gate != 0 || term == RC_TERMINATE_DRAIN)) {
				// Backpressure: wait for the host to free an output slot; never drop.
				if (out_tail - rc_load_acquire(&out->head.v) < out->capacity) {
					cmd = RC_CMD_HANDLE;
				}
			}
			s->cmd = cmd;
			s->in_index = in_head;
			s->out_index = out_tail;
		}
		__syncthreads();
		const uint64_t cmd = s->cmd;
		if (cmd == RC_CMD_EXIT) {
			break;
		}
		if (cmd == RC_CMD_HANDLE) {
			const rc_slot_header *req = rc_slot(in, s->in_index);
			rc_slot_header *rep = rc_slot(out, s->out_index);
			uint32_t reply_len = 0;
			const uint32_t status = rc_dispatch(req, rep, in->slot_size, out->slot_size, red, &reply_len);
			// Every thread's payload writes and request reads happen before
			// thread 0's release stores below (bar.sync orders them at CTA
			// scope; the system-scope release is cumulative).
			__syncthreads();
			if (tid == 0) {
				const uint64_t stamp = req->timestamp_ns;
				rep->type_id = req->type_id;
				rep->flags = RC_FLAG_REPLY | (status != RC_STATUS_OK ? RC_FLAG_ERROR : 0u);
				rep->correlation_id = req->correlation_id;
				rep->length = reply_len;
				rep->status = status;
				rep->timestamp_ns = stamp;
				rc_store_release(&out->tail.v, ++out_tail); // publish the reply
				rc_store_release(&in->head.v, ++in_head);   // hand the request slot back

				const uint64_t now = rc_now_ns();
				rc_store_relaxed(&cb->processed.v, ++processed);
				if (status != RC_STATUS_OK) {
					rc_store_relaxed(&cb->errors.v, ++errors);
				}
				if (stamp != 0 && now >= stamp) {
					const uint64_t lat = now - stamp;
					if (lat < lat_min) {
						lat_min = lat;
						rc_store_relaxed(&cb->latency_min.v, lat_min);
					}
					if (lat > lat_max) {
						lat_max = lat;
						rc_store_relaxed(&cb->latency_max.v, lat_max);
					}
					rc_store_relaxed(&cb->latency_sum.v, lat_sum += lat);
					rc_store_relaxed(&cb->latency_count.v, ++lat_count);
				}
				rc_store_relaxed(&cb->heartbeat.v, now);
				backoff = RC_BACKOFF_MIN_NS;
			}
		} else if (tid == 0) {
			__nanosleep(backoff);
			backoff = backoff * 2 > RC_BACKOFF_MAX_NS ? RC_BACKOFF_MAX_NS : backoff * 2;
		}
		__syncthreads(); // s is rewritten by thread 0 next iteration
	}
	if (tid == 0) {
		rc_store_relaxed(&cb->heartbeat.v, rc_now_ns());
		rc_store_release(&cb->terminated_ack.v, RC_TERMINATED);
	}
}

#endif

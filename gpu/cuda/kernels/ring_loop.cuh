// The persistent loop template of device ring kernels: one block polls its
// input ring in mapped pinned host memory and calls a handler for each
// message, with every thread of the block, until the host asks it to
// terminate. gpu/cuda generates a program around it for each device ring
// kernel (the C structs of its Go request, response and state types, the
// user's handler source and a __global__ entry); NVRTC compiles that for
// the device and g++ (through host_shim.h) for the simulated device.
//
// Needs ring_abi_gen.h (and host_shim.h on the host) included first; uses
// no header of its own, so NVRTC needs no include path, and no __shared__
// variable (the entry passes dynamic shared memory), so several loops run
// at once in one host process.
//
// One message, in order:
//   1. thread 0 acquire-loads (system scope) the terminate word, the gate
//      and the input ring's tail, checks the output ring has room, and
//      broadcasts a command through shared memory (__syncthreads);
//   2. the block checks the slot's length against sizeof(Req) and that
//      request and response fit their slots (else RC_STATUS_BAD_LENGTH);
//   3. the block copies the request into shared memory and zero-fills the
//      response there (when both fit RC_LOOP_STAGE_MAX; larger messages are
//      read in place from the slot and the response is zero-filled in the
//      output slot), so a reused slot never leaks an earlier reply's bytes;
//   4. every thread calls the handler; thread 0's return value is the
//      message's status;
//   5. on RC_STATUS_OK the block copies the response to the output slot;
//   6. thread 0 writes the reply header, publishes it with a release store
//      (system scope) and hands the request slot back, then updates the
//      control block's counters.
// The loop resumes from the rings' indices and the control block's
// counters, so a relaunch after a restart continues where the last one
// stopped. State is the caller's (zeroed by the host before every launch).

#ifndef RINGACTOR_RING_LOOP_CUH
#define RINGACTOR_RING_LOOP_CUH

#define RC_LOOP_MAX_BLOCK 1024u      // largest blockDim.x of a device ring kernel
#define RC_LOOP_SMEM_HEADER 64u      // shared bytes of the loop's own words
#define RC_LOOP_SMEM_MAX 49152u      // dynamic shared memory without an opt-in (48 KiB)
#define RC_LOOP_SCRATCH_MAX (RC_LOOP_MAX_BLOCK * 8u) // the handlers' reduction scratch at the largest block
#define RC_LOOP_STAGE_MAX (RC_LOOP_SMEM_MAX - RC_LOOP_SMEM_HEADER - RC_LOOP_SCRATCH_MAX)
#define RC_LOOP_BACKOFF_MIN_NS 64u   // first idle sleep
#define RC_LOOP_BACKOFF_MAX_NS 20000u // idle sleeps double up to this (20 µs)

#define RC_LOOP_IDLE 0u
#define RC_LOOP_HANDLE 1u
#define RC_LOOP_EXIT 2u

// rc_ctx is what a handler learns about its call.
typedef struct rc_ctx {
	uint32_t thread;         // threadIdx.x
	uint32_t threads;        // blockDim.x
	uint32_t type_id;        // the message's registered type id
	uint32_t reserved;
	uint64_t correlation_id; // the message's id on the host
	uint64_t sequence;       // the message's index in the input ring (counts every message since launch 0)
	double *scratch;         // threads doubles of shared memory, for rc_block_reduce
} rc_ctx;

// rc_no_state is the State of a stateless device ring kernel.
typedef struct rc_no_state {
	uint8_t unused;
} rc_no_state;

// System-scope accessors of the 64-bit words shared with the host: inline
// PTX on the device (no libcu++ header needed), std::atomic_ref on the host.
__device__ __forceinline__ uint64_t rc_sys_load_acquire(const uint64_t *p) {
#if defined(__CUDA_ARCH__)
	uint64_t v;
	asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
#else
	::rc_host::mapped_reads.fetch_add(1, std::memory_order_relaxed);
	return std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(p)).load(std::memory_order_acquire);
#endif
}

__device__ __forceinline__ uint64_t rc_sys_load_relaxed(const uint64_t *p) {
#if defined(__CUDA_ARCH__)
	uint64_t v;
	asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
#else
	::rc_host::mapped_reads.fetch_add(1, std::memory_order_relaxed);
	return std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(p)).load(std::memory_order_relaxed);
#endif
}

__device__ __forceinline__ void rc_sys_store_release(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
	asm volatile("st.release.sys.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
#else
	std::atomic_ref<uint64_t>(*p).store(v, std::memory_order_release);
#endif
}

__device__ __forceinline__ void rc_sys_store_relaxed(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
	asm volatile("st.relaxed.sys.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
#else
	std::atomic_ref<uint64_t>(*p).store(v, std::memory_order_relaxed);
#endif
}

// rc_loop_now_ns: %globaltimer on the device, system_clock on the host.
__device__ __forceinline__ uint64_t rc_loop_now_ns() {
#if defined(__CUDA_ARCH__)
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
#else
	return ::rc_host::now_ns();
#endif
}

__device__ __forceinline__ rc_slot_header *rc_loop_slot(rc_ring_header *r, uint64_t index) {
	return (rc_slot_header *)((char *)(r + 1) + (index & (r->capacity - 1)) * r->slot_size);
}

__host__ __device__ constexpr uint64_t rc_align16(uint64_t n) { return (n + 15u) & ~(uint64_t)15u; }

// rc_loop_staged says whether a message of these sizes is staged in shared
// memory; rc_loop_smem is the dynamic shared memory its loop needs (the
// host computes the same figures from the Go types).
__host__ __device__ constexpr bool rc_loop_staged(uint64_t req, uint64_t resp) {
	return rc_align16(req) + rc_align16(resp) <= RC_LOOP_STAGE_MAX;
}
__host__ __device__ constexpr uint64_t rc_loop_smem(uint64_t req, uint64_t resp) {
	return RC_LOOP_SMEM_HEADER + (rc_loop_staged(req, resp) ? rc_align16(req) + rc_align16(resp) : 0u);
}

// rc_block_copy copies n bytes with every thread of the block (4-byte
// words, then the tail bytes); dst and src are 4-byte aligned.
__device__ __forceinline__ void rc_block_copy(void *dst, const void *src, uint64_t n) {
	const uint64_t words = n / 4u;
	uint32_t *d = (uint32_t *)dst;
	const uint32_t *s = (const uint32_t *)src;
	for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) {
		d[i] = s[i];
	}
	if (threadIdx.x == 0) {
		for (uint64_t i = words * 4u; i < n; i++) {
			((uint8_t *)dst)[i] = ((const uint8_t *)src)[i];
		}
	}
}

// rc_block_zero zero-fills n bytes with every thread of the block.
__device__ __forceinline__ void rc_block_zero(void *dst, uint64_t n) {
	const uint64_t words = n / 4u;
	uint32_t *d = (uint32_t *)dst;
	for (uint64_t i = threadIdx.x; i < words; i += blockDim.x) {
		d[i] = 0u;
	}
	if (threadIdx.x == 0) {
		for (uint64_t i = words * 4u; i < n; i++) {
			((uint8_t *)dst)[i] = 0u;
		}
	}
}

// rc_block_reduce combines every thread's v with op (a functor of two
// doubles) through ctx->scratch; every thread of the block must call it
// (same branch) and gets the result. Any block size works.
template <class Op>
__device__ double rc_block_reduce(const rc_ctx *ctx, double v, Op op) {
	double *red = ctx->scratch;
	const uint32_t tid = ctx->thread;
	red[tid] = v;
	__syncthreads();
	uint32_t n = ctx->threads;
	while (n > 1) {
		const uint32_t half = (n + 1) / 2;
		if (tid + half < n) {
			red[tid] = op(red[tid], red[tid + half]);
		}
		__syncthreads();
		n = half;
	}
	const double r = red[0];
	__syncthreads();
	return r;
}

// rc_fence_device orders a block's writes to device memory (its State)
// before what it does next, device-wide.
__device__ __forceinline__ void rc_fence_device() {
#if defined(__CUDA_ARCH__)
	__threadfence();
#else
	std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// rc_loop_tally is thread 0's private copy of the words it alone writes
// while it serves a ring: the rings' indices and the control block's
// counters.
typedef struct rc_loop_tally {
	uint64_t in_head, out_tail, processed, errors;
	uint64_t lat_min, lat_max, lat_sum, lat_count;
} rc_loop_tally;

// rc_loop_tally_load reads the words a (re)started loop resumes from.
__device__ __forceinline__ void rc_loop_tally_load(rc_loop_tally *t, rc_control_block *cb, rc_ring_header *in,
						   rc_ring_header *out) {
	t->in_head = rc_sys_load_relaxed(&in->head.v);
	t->out_tail = rc_sys_load_relaxed(&out->tail.v);
	t->processed = rc_sys_load_relaxed(&cb->processed.v);
	t->errors = rc_sys_load_relaxed(&cb->errors.v);
	t->lat_min = rc_sys_load_relaxed(&cb->latency_min.v);
	t->lat_max = rc_sys_load_relaxed(&cb->latency_max.v);
	t->lat_sum = rc_sys_load_relaxed(&cb->latency_sum.v);
	t->lat_count = rc_sys_load_relaxed(&cb->latency_count.v);
}

// rc_loop_call_t runs the handler on one message (steps 2 to 5 at the
// top): req is the request's slot header (its payload follows), rep the
// reply's (its payload is written; thread 0 writes the header after).
// fits says the request's length is sizeof(Req) and both messages fit
// their slots (else RC_STATUS_BAD_LENGTH); pass, when not RC_STATUS_OK, is
// an upstream stage's error the message carries (device lanes): the
// handler is not called and pass is the status. Every thread of the block
// calls it; the status is left in bc[3]. It returns false when the
// simulated device trapped in the handler.
template <class Req, class Resp, class State, uint32_t (*Handler)(const rc_ctx *, const Req *, Resp *, State *)>
__device__ __forceinline__ bool rc_loop_call_t(const rc_slot_header *req, rc_slot_header *rep, bool fits, uint32_t pass,
					       uint64_t sequence, State *state, unsigned char *smem, volatile uint64_t *bc) {
	constexpr bool staged = rc_loop_staged(sizeof(Req), sizeof(Resp));
	const unsigned tid = threadIdx.x;
	Req *sreq = (Req *)(smem + RC_LOOP_SMEM_HEADER);
	Resp *sresp = (Resp *)(smem + RC_LOOP_SMEM_HEADER + rc_align16(sizeof(Req)));
	const void *payload = (const void *)(req + 1);
	void *reply = (void *)(rep + 1);
	uint32_t status = RC_STATUS_BAD_LENGTH;
	if (pass != RC_STATUS_OK) {
		status = pass; // an upstream stage failed: carried on, not handled
	} else if (fits) {
		const Req *r = (const Req *)payload;
		Resp *w = (Resp *)reply;
		if (staged) {
			rc_block_copy(sreq, payload, sizeof(Req));
			rc_block_zero(sresp, sizeof(Resp));
			r = sreq;
			w = sresp;
		} else {
			rc_block_zero(reply, sizeof(Resp));
		}
		rc_ctx ctx;
		ctx.thread = tid;
		ctx.threads = blockDim.x;
		ctx.type_id = req->type_id;
		ctx.reserved = 0;
		ctx.correlation_id = req->correlation_id;
		ctx.sequence = sequence;
		ctx.scratch = (double *)(smem + rc_loop_smem(sizeof(Req), sizeof(Resp)));
		__syncthreads();
		const uint32_t st = Handler(&ctx, r, w, state);
		rc_fence_device(); // the State's writes before the State can pass to another block
		__syncthreads();   // every thread's writes to w are done
#if !defined(__CUDA_ARCH__) && defined(RC_HOST_SIM)
		if (::rc_host::trapped()) {
			return false; // the simulated device fault
		}
#endif
		if (tid == 0) {
			bc[3] = st;
		}
		__syncthreads();
		status = (uint32_t)bc[3];
		if (staged && status == RC_STATUS_OK) {
			rc_block_copy(reply, sresp, sizeof(Resp));
		}
	}
	// Every thread's payload writes and request reads happen before
	// thread 0's release stores after (bar.sync orders them at CTA scope;
	// the release is cumulative).
	__syncthreads();
	if (tid == 0) {
		bc[3] = status;
	}
	return true;
}

// rc_loop_count updates thread 0's tally and the control block's counters
// for one answered message (stamp: its admission time, 0 when untimed).
__device__ __forceinline__ void rc_loop_count(rc_control_block *cb, rc_loop_tally *t, uint32_t status, uint64_t stamp) {
	const uint64_t now = rc_loop_now_ns();
	rc_sys_store_relaxed(&cb->processed.v, ++t->processed);
	if (status != RC_STATUS_OK) {
		rc_sys_store_relaxed(&cb->errors.v, ++t->errors);
	}
	if (stamp != 0 && now >= stamp) {
		const uint64_t lat = now - stamp;
		if (lat < t->lat_min) {
			t->lat_min = lat;
			rc_sys_store_relaxed(&cb->latency_min.v, t->lat_min);
		}
		if (lat > t->lat_max) {
			t->lat_max = lat;
			rc_sys_store_relaxed(&cb->latency_max.v, t->lat_max);
		}
		rc_sys_store_relaxed(&cb->latency_sum.v, t->lat_sum += lat);
		rc_sys_store_relaxed(&cb->latency_count.v, ++t->lat_count);
	}
	rc_sys_store_relaxed(&cb->heartbeat.v, now);
}

// rc_loop_serve_t handles the message at in_index of in into the slot at
// out_index of out (steps 2 to 6 at the top): every thread of the block
// calls it; thread 0 publishes the reply, hands the request slot back and
// updates t and cb's counters. It returns false when the simulated device
// trapped in the handler (the loop then dies: no ack, no reply). bc is the
// loop's shared words (bc[3] carries thread 0's status).
template <class Req, class Resp, class State, uint32_t (*Handler)(const rc_ctx *, const Req *, Resp *, State *)>
__device__ __forceinline__ bool rc_loop_serve_t(rc_control_block *cb, rc_ring_header *in, rc_ring_header *out,
						uint64_t in_index, uint64_t out_index, State *state, unsigned char *smem,
						volatile uint64_t *bc, rc_loop_tally *t) {
	const rc_slot_header *req = rc_loop_slot(in, in_index);
	rc_slot_header *rep = rc_loop_slot(out, out_index);
	const bool fits = req->length == sizeof(Req) && sizeof(rc_slot_header) + sizeof(Req) <= in->slot_size &&
			  sizeof(rc_slot_header) + sizeof(Resp) <= out->slot_size;
	if (!rc_loop_call_t<Req, Resp, State, Handler>(req, rep, fits, RC_STATUS_OK, in_index, state, smem, bc)) {
		return false;
	}
	if (threadIdx.x == 0) {
		const uint32_t status = (uint32_t)bc[3];
		const uint64_t stamp = req->timestamp_ns;
		rep->type_id = req->type_id;
		rep->flags = RC_FLAG_REPLY | (status != RC_STATUS_OK ? RC_FLAG_ERROR : 0u);
		rep->correlation_id = req->correlation_id;
		rep->length = status == RC_STATUS_OK ? (uint32_t)sizeof(Resp) : 0u;
		rep->status = status;
		rep->timestamp_ns = stamp;
		rc_sys_store_release(&out->tail.v, ++t->out_tail); // publish the reply
		rc_sys_store_release(&in->head.v, ++t->in_head);   // hand the request slot back
		rc_loop_count(cb, t, status, stamp);
	}
	return true;
}

// rc_ring_loop_t is the loop of one device ring kernel. cb, in and out are
// device pointers of mapped pinned host memory; state points to
// sizeof(State) zeroed bytes the kernel keeps between messages; smem is at
// least rc_loop_smem(sizeof(Req), sizeof(Resp)) + 8 * blockDim.x bytes of
// shared memory, 16-byte aligned (the last part is the handler's scratch).
template <class Req, class Resp, class State, uint32_t (*Handler)(const rc_ctx *, const Req *, Resp *, State *)>
__device__ void rc_ring_loop_t(rc_control_block *cb, rc_ring_header *in, rc_ring_header *out, State *state,
			       unsigned char *smem) {
	const unsigned tid = threadIdx.x;
	const unsigned nt = blockDim.x;
	if (gridDim.x * gridDim.y * gridDim.z != 1 || blockDim.y * blockDim.z != 1 || nt > RC_LOOP_MAX_BLOCK) {
		if (tid == 0 && blockIdx.x + blockIdx.y + blockIdx.z == 0) {
			rc_sys_store_release(&cb->terminated_ack.v, RC_TERMINATED_BAD_LAUNCH);
		}
		return;
	}
	volatile uint64_t *bc = (volatile uint64_t *)smem; // cmd, in index, out index, status

	rc_loop_tally t = {};
	unsigned backoff = RC_LOOP_BACKOFF_MIN_NS;
	if (tid == 0) {
		rc_loop_tally_load(&t, cb, in, out);
		rc_sys_store_relaxed(&cb->heartbeat.v, rc_loop_now_ns());
	}

	for (;;) {
		if (tid == 0) {
			uint64_t cmd = RC_LOOP_IDLE;
			const uint64_t term = rc_sys_load_acquire(&cb->terminate.v);
			const uint64_t gate = rc_sys_load_acquire(&cb->gate.v);
			const bool pending = rc_sys_load_acquire(&in->tail.v) != t.in_head; // acquire: the slot's bytes
			if (term == RC_TERMINATE_NOW || (term != RC_TERMINATE_NONE && !pending)) {
				cmd = RC_LOOP_EXIT;
			} else if (pending && (gate != 0 || term == RC_TERMINATE_DRAIN)) {
				// Backpressure: wait for the host to free an output slot; never drop.
				if (t.out_tail - rc_sys_load_acquire(&out->head.v) < out->capacity) {
					cmd = RC_LOOP_HANDLE;
				}
			}
			bc[0] = cmd;
			bc[1] = t.in_head;
			bc[2] = t.out_tail;
		}
		__syncthreads();
		const uint64_t cmd = bc[0];
		if (cmd == RC_LOOP_EXIT) {
			break;
		}
		if (cmd == RC_LOOP_HANDLE) {
			if (!rc_loop_serve_t<Req, Resp, State, Handler>(cb, in, out, bc[1], bc[2], state, smem, bc, &t)) {
				return; // the simulated device fault: the kernel dies here, no ack, no reply
			}
			backoff = RC_LOOP_BACKOFF_MIN_NS;
		} else if (tid == 0) {
			__nanosleep(backoff);
			backoff = backoff * 2 > RC_LOOP_BACKOFF_MAX_NS ? RC_LOOP_BACKOFF_MAX_NS : backoff * 2;
		}
		__syncthreads(); // bc is rewritten by thread 0 next iteration
	}
	if (tid == 0) {
		rc_sys_store_relaxed(&cb->heartbeat.v, rc_loop_now_ns());
		rc_sys_store_release(&cb->terminated_ack.v, RC_TERMINATED);
	}
}

// RC_DYNAMIC_SHARED declares name as the launch's dynamic shared memory:
// extern __shared__ on the device; on the host, the buffer rc_host::launch
// gives each block (host_shim.h).
#if defined(__CUDACC__)
#define RC_DYNAMIC_SHARED(name) extern __shared__ __align__(16) unsigned char name[]
#else
#define RC_DYNAMIC_SHARED(name) unsigned char *name = ::rc_host::dyn_smem
#endif

#endif

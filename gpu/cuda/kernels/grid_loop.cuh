// The persistent grid of a device ring program: ONE grid per loaded
// program serves many device ring kernels, each a mailbox (its control
// block and its input and output slot rings in mapped pinned host memory,
// and a State slot in a slab of device memory) in a table the host writes
// while the grid runs. Blocks find work through a doorbell, a bounded
// queue of mailbox indices the host fills when a mailbox gets work (a
// published request on an empty ring, an opened gate, a terminate, room in
// a full output ring), so an idle mailbox costs the grid nothing, and
// through the ready queue, a bounded queue of mailbox indices in device
// memory the blocks fill themselves when a mailbox's quantum of service
// ends while it still has work, so more busy mailboxes than blocks are
// served in turn.
//
// Needs ring_abi_gen.h and ring_loop.cuh first (host_shim.h on the host).
//
// Per block (thread 0 decides, the block follows through shared memory):
//   0. an idle block polls mapped memory only while it is the grid's
//      watcher (one block at a time, a role claimed in device memory and
//      given up when the watcher takes work); the others poll device
//      memory until the role is free, a block has left the loop, or the
//      ready queue holds a mailbox (they take it);
//   1. without a mailbox in hand, take the ready queue's head, else a
//      doorbell slot (the queue's head is a device-memory word, claimed
//      with a compare-and-swap; the slot is handed back to the host with a
//      release store of its sequence), clear the mailbox's Queued flag,
//      and claim the mailbox (its claim word in device memory: FREE ->
//      OWNED; a mailbox another block owns, or the ready queue holds, is
//      marked AGAIN instead, and its owner looks once more before it lets
//      go), so one block at a time serves a mailbox: order is kept. A
//      block that has just handed a mailbox over looks at the doorbell
//      first (see "Fair service");
//   2. read the table entry (generation, addresses, generation again) and
//      skip an empty, changing or finished one; a generation the grid has
//      not seen zeroes the State slot first (the restart of a kernel);
//   3. serve it as rc_ring_loop_t serves its ring (gate, terminate drain or
//      now, output backpressure, one message at a time, every thread calls
//      the handler) for a quantum: RC_GRID_QUANTUM messages or
//      RC_GRID_QUANTUM_NS nanoseconds, whichever ends first (at least one
//      message). At the quantum's end, with work left and another mailbox
//      waiting (the ready queue or the doorbell not empty), hand the
//      mailbox over to the ready queue; with nobody waiting, start another
//      quantum. Without work let it go (OWNED -> FREE, or AGAIN -> OWNED
//      and look again);
//   4. a finished mailbox (terminate) gets its dead generation recorded in
//      device memory, its claim freed and then its terminated ack.
// The grid exits when its own control block's terminate word is set (a
// device epoch parks it; the host relaunches it on the same memory and
// rings every mailbox again); the last block out acknowledges.
//
// Lost wake-ups: the host stores a request's tail, then reads the ring's
// head, and rings when the ring was empty before; the owning block stores
// the head, fences (system scope, sequentially consistent), then reads the
// tail: one of the two sees the other. The same holds for the Queued flag
// (device: store 0, fence, then read the words) and for OutWait.
//
// Fair service (the ready queue):
//   - Ownership. A mailbox is held by exactly one of: nobody (claim FREE),
//     one block (OWNED or AGAIN), or the ready queue (OWNED or AGAIN, no
//     block serving it). A block hands a mailbox over by putting its index
//     into the ready queue WITHOUT touching the claim word (a fence first:
//     the State's and the tally's writes before the next owner's reads);
//     the block that takes the index out owns the mailbox as if it had
//     claimed it. A doorbell slot for it taken meanwhile finds the word
//     OWNED and marks it AGAIN (or finds AGAIN), so the next owner looks
//     once more before it lets go: the ring is not lost, and no two blocks
//     serve the mailbox at once (its order and State stay whole).
//   - The queue never overflows. Only a mailbox's owning block puts it in,
//     and it stops owning it as it does; so each mailbox has at most one
//     position between the queue's head and tail (a position claimed and
//     not yet written included): tail - head <= Capacity <= ReadyCapacity.
//     A producer's slot at pos was then last used by position
//     pos - ReadyCapacity < head, whose consumer has claimed it and hands
//     the slot back a few instructions later: the producer's wait for the
//     slot is bounded, never a wait for room.
//   - The slots (Vyukov's bounded MPMC queue): a producer claims pos with
//     an atomic add on ready_tail, waits for the slot's seq == pos, writes
//     the index, then publishes seq = pos + 1 (release). A consumer takes
//     head h with a compare-and-swap only once the slot's seq == h + 1
//     (acquire), reads the index, and hands the slot back with seq =
//     h + ReadyCapacity (release). No entry is read before its producer
//     published it; a consumer that finds a claimed position unpublished
//     sees the queue empty, and the producer itself (it takes work next)
//     or an idle block takes the entry later.
//   - Nobody starves. Every quantum's end looks at the doorbell, and the
//     one take after a hand-over takes from it first, so a mailbox rung
//     while every block is busy is taken at the next quantum's end of any
//     block. Every other take takes from the ready queue first, in order.
//     A mailbox taken from the doorbell either runs dry (its block's next
//     take is from the ready queue) or is handed over behind the queued
//     ones, and cannot pass them again before they are served (it is not
//     free meanwhile): each queued mailbox's turn comes, so its backlog
//     (what a device epoch waits for before it parks the grid) is served.
//   - Parks and growth. A block that sees the grid's terminate frees the
//     claim of the mailbox in its hand and exits; mailboxes in the ready
//     queue stay there, owned by it, across the relaunch (the same device
//     memory), and the relaunch's ring of every mailbox marks them AGAIN.
//     A table growth starts with an empty ready queue and every claim
//     free (the host writes both): the relaunch rings every mailbox.

#ifndef RINGACTOR_GRID_LOOP_CUH
#define RINGACTOR_GRID_LOOP_CUH

#define RC_GRID_IDLE 0u
#define RC_GRID_HANDLE 1u
#define RC_GRID_EXIT 2u
#define RC_GRID_ZERO 3u
#define RC_GRID_NONE 0xffffffffu

// The idle blocks' watcher backs off up to RC_GRID_BACKOFF_MAX_NS between
// looks at the doorbell (mapped memory); the other idle blocks poll device
// memory only, and back off up to RC_GRID_PEER_BACKOFF_MAX_NS. On the
// simulated device every block is a host thread: longer caps keep idle
// grids from eating the host's cores.
#if defined(RC_HOST_SIM)
#define RC_GRID_BACKOFF_MAX_NS 200000u
#define RC_GRID_PEER_BACKOFF_MAX_NS 200000u
#else
#define RC_GRID_BACKOFF_MAX_NS RC_LOOP_BACKOFF_MAX_NS
#define RC_GRID_PEER_BACKOFF_MAX_NS 2000u
#endif

// A block serves a mailbox for a quantum of RC_GRID_QUANTUM messages or
// RC_GRID_QUANTUM_NS nanoseconds of the loop's clock, whichever ends
// first (at least one message), before it hands the mailbox over to the
// ready queue while another mailbox waits.
#ifndef RC_GRID_QUANTUM
#define RC_GRID_QUANTUM 8u
#endif
#ifndef RC_GRID_QUANTUM_NS
#define RC_GRID_QUANTUM_NS 5000u
#endif

// Device-scope atomics on device memory.
__device__ __forceinline__ uint32_t rc_dev_cas32(uint32_t *p, uint32_t cmp, uint32_t val) {
#if defined(__CUDA_ARCH__)
	return atomicCAS((unsigned int *)p, (unsigned int)cmp, (unsigned int)val);
#else
	std::atomic_ref<uint32_t>(*p).compare_exchange_strong(cmp, val);
	return cmp;
#endif
}

__device__ __forceinline__ uint32_t rc_dev_exch32(uint32_t *p, uint32_t val) {
#if defined(__CUDA_ARCH__)
	return atomicExch((unsigned int *)p, (unsigned int)val);
#else
	return std::atomic_ref<uint32_t>(*p).exchange(val);
#endif
}

__device__ __forceinline__ uint64_t rc_dev_cas64(uint64_t *p, uint64_t cmp, uint64_t val) {
#if defined(__CUDA_ARCH__)
	return atomicCAS((unsigned long long *)p, (unsigned long long)cmp, (unsigned long long)val);
#else
	std::atomic_ref<uint64_t>(*p).compare_exchange_strong(cmp, val);
	return cmp;
#endif
}

__device__ __forceinline__ uint64_t rc_dev_add64(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
	return atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
	return std::atomic_ref<uint64_t>(*p).fetch_add(v);
#endif
}

__device__ __forceinline__ uint64_t rc_dev_load64(const uint64_t *p) {
#if defined(__CUDA_ARCH__)
	return *(const volatile uint64_t *)p;
#else
	return std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(p)).load(std::memory_order_acquire);
#endif
}

__device__ __forceinline__ void rc_dev_store64(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
	*(volatile uint64_t *)p = v;
#else
	std::atomic_ref<uint64_t>(*p).store(v, std::memory_order_release);
#endif
}

// Device-scope acquire and release of device-memory words (the ready
// queue's sequence numbers).
__device__ __forceinline__ uint64_t rc_dev_load_acquire64(const uint64_t *p) {
#if defined(__CUDA_ARCH__)
	uint64_t v;
	asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
#else
	return std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(p)).load(std::memory_order_acquire);
#endif
}

__device__ __forceinline__ void rc_dev_store_release64(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
	asm volatile("st.release.gpu.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
#else
	std::atomic_ref<uint64_t>(*p).store(v, std::memory_order_release);
#endif
}

// rc_grid_view is where a grid's arrays start.
typedef struct rc_grid_view {
	rc_mailbox_entry *entries;
	rc_doorbell_slot *bells;
	uint32_t *claims;
	uint64_t *seen;
	uint64_t *dead;
	rc_ready_slot *ready;
	uint64_t capacity;
	uint64_t bell_mask;
	uint64_t ready_mask;
	uint64_t stride;
} rc_grid_view;

// rc_grid_claims_bytes is the device bytes of the claim words (rounded to 16).
__host__ __device__ constexpr uint64_t rc_grid_claims_bytes(uint64_t capacity) { return rc_align16(capacity * 4u); }

// rc_grid_claim makes the calling block the owner of mailbox i; false when
// another block owns it (it is then marked AGAIN for its owner).
__device__ __forceinline__ bool rc_grid_claim(const rc_grid_view &g, uint32_t i) {
	for (;;) {
		uint32_t c = rc_dev_cas32(&g.claims[i], RC_CLAIM_FREE, RC_CLAIM_OWNED);
		if (c == RC_CLAIM_FREE) {
			rc_fence_device();
			return true;
		}
		if (c == RC_CLAIM_AGAIN) {
			return false;
		}
		c = rc_dev_cas32(&g.claims[i], RC_CLAIM_OWNED, RC_CLAIM_AGAIN);
		if (c != RC_CLAIM_FREE) {
			return false;
		}
	}
}

// rc_grid_release lets mailbox i go; false when another block asked for it
// meanwhile (AGAIN): the caller still owns it and looks again.
__device__ __forceinline__ bool rc_grid_release(const rc_grid_view &g, uint32_t i) {
	rc_fence_device();
	if (rc_dev_cas32(&g.claims[i], RC_CLAIM_OWNED, RC_CLAIM_FREE) == RC_CLAIM_AGAIN) {
		rc_dev_exch32(&g.claims[i], RC_CLAIM_OWNED);
		rc_fence_device();
		return false;
	}
	return true;
}

// rc_grid_ready_put hands mailbox i, which the calling block owns, over to
// the ready queue: the queue owns it until a block takes it out (its
// claim word stays OWNED or AGAIN). The queue never lacks room (see the
// top): the wait is for the consumer of the slot's previous lap to hand
// it back, a few instructions away.
__device__ __forceinline__ void rc_grid_ready_put(const rc_grid_view &g, rc_grid_words *w, uint32_t i) {
	rc_fence_device(); // the State's and the tally's writes before the next owner's reads
	const uint64_t pos = rc_dev_add64(&w->ready_tail, 1u);
	rc_ready_slot *s = &g.ready[pos & g.ready_mask];
	while (rc_dev_load_acquire64(&s->seq) != pos) {
		__nanosleep(32);
	}
	*(volatile uint32_t *)&s->mailbox = i;
	rc_dev_store_release64(&s->seq, pos + 1u); // published: the index is written
}

// rc_grid_ready_take takes the ready queue's head mailbox, which the caller
// then owns; RC_GRID_NONE when the queue is empty (or its head position is
// claimed and not yet published).
__device__ __forceinline__ uint32_t rc_grid_ready_take(const rc_grid_view &g, rc_grid_words *w) {
	for (;;) {
		const uint64_t h = rc_dev_load64(&w->ready_head);
		rc_ready_slot *s = &g.ready[h & g.ready_mask];
		const uint64_t seq = rc_dev_load_acquire64(&s->seq);
		if (seq != h + 1u) {
			if ((int64_t)(seq - (h + 1u)) < 0) {
				return RC_GRID_NONE; // nothing published at the head
			}
			continue; // another block took it: h is stale
		}
		if (rc_dev_cas64(&w->ready_head, h, h + 1u) != h) {
			continue;
		}
		const uint32_t i = *(volatile uint32_t *)&s->mailbox;
		rc_dev_store_release64(&s->seq, h + g.ready_mask + 1u); // the slot is free for the next lap
		rc_fence_device(); // the previous owner's writes before this block's reads
		return i;
	}
}

// rc_grid_waiting reports whether another mailbox may wait for a block:
// the ready queue or the doorbell is not empty (a hint: a block asks at
// the end of each quantum; one mapped read when the ready queue is empty).
__device__ __forceinline__ bool rc_grid_waiting(const rc_grid_view &g, rc_grid_words *w) {
	if (rc_dev_load64(&w->ready_tail) != rc_dev_load64(&w->ready_head)) {
		return true;
	}
	const uint64_t h = rc_dev_load64(&w->bell_head);
	return rc_sys_load_acquire(&g.bells[h & g.bell_mask].seq) == h + 1u;
}

// rc_grid_take takes the next doorbell slot and claims its mailbox; it
// returns the mailbox's index, or RC_GRID_NONE when the doorbell is empty.
__device__ __forceinline__ uint32_t rc_grid_take(const rc_grid_view &g, rc_grid_words *w, bool *empty) {
	for (;;) {
		const uint64_t h = rc_dev_load64(&w->bell_head);
		rc_doorbell_slot *s = &g.bells[h & g.bell_mask];
		const uint64_t seq = rc_sys_load_acquire(&s->seq);
		if (seq != h + 1u) {
			if ((int64_t)(seq - (h + 1u)) < 0) {
				*empty = true;
				return RC_GRID_NONE; // nothing rung
			}
			continue; // another block took it: h is stale
		}
		if (rc_dev_cas64(&w->bell_head, h, h + 1u) != h) {
			continue;
		}
		const uint32_t i = *(volatile uint32_t *)&s->mailbox;
		rc_sys_store_release(&s->seq, h + g.bell_mask + 1u); // the slot is the host's again
		if (i >= g.capacity) {
			continue;
		}
		rc_sys_store_relaxed(&g.entries[i].queued, 0u);
		__threadfence_system(); // Queued = 0 before any look at the mailbox's words
		if (rc_grid_claim(g, i)) {
			return i;
		}
	}
}

// rc_grid_loop_t is the loop of a device ring program's persistent grid.
// gcb is the grid's own control block (terminate, ack; mapped), tab the
// mailbox table (mapped), w the grid's device words, slab the State slots
// (device memory); smem as for rc_ring_loop_t.
template <class Req, class Resp, class State, uint32_t (*Handler)(const rc_ctx *, const Req *, Resp *, State *)>
__device__ void rc_grid_loop_t(rc_control_block *gcb, rc_grid_header *tab, rc_grid_words *w, unsigned char *slab,
			       unsigned char *smem) {
	const unsigned tid = threadIdx.x;
	const unsigned nt = blockDim.x;
	if (gridDim.y * gridDim.z != 1 || blockDim.y * blockDim.z != 1 || nt > RC_LOOP_MAX_BLOCK) {
		if (tid == 0 && blockIdx.x + blockIdx.y + blockIdx.z == 0) {
			rc_sys_store_release(&gcb->terminated_ack.v, RC_TERMINATED_BAD_LAUNCH);
		}
		return;
	}
	volatile uint64_t *bc = (volatile uint64_t *)smem; // cmd, in index, out index, status, cb, in, out, state

	rc_grid_view g;
	g.capacity = rc_sys_load_relaxed(&tab->capacity);
	g.bell_mask = rc_sys_load_relaxed(&tab->bell_capacity) - 1u;
	g.stride = rc_sys_load_relaxed(&tab->state_stride);
	g.entries = (rc_mailbox_entry *)(tab + 1);
	g.bells = (rc_doorbell_slot *)(g.entries + g.capacity);
	g.claims = (uint32_t *)(w + 1);
	g.seen = (uint64_t *)((unsigned char *)g.claims + rc_grid_claims_bytes(g.capacity));
	g.dead = g.seen + g.capacity;
	g.ready = (rc_ready_slot *)(g.dead + g.capacity);
	g.ready_mask = rc_sys_load_relaxed(&tab->ready_capacity) - 1u;

	// Thread 0's mailbox in hand and its private copies of the words it
	// alone writes while it owns the mailbox.
	uint32_t cur = RC_GRID_NONE;
	uint64_t gen = 0;
	rc_control_block *cb = 0;
	rc_ring_header *in = 0, *out = 0;
	rc_loop_tally t = {};
	unsigned backoff = RC_LOOP_BACKOFF_MIN_NS;
	bool trapped = false;
	// The quantum of the mailbox in hand: messages served and when it
	// began; handed says the block has just handed its mailbox over (its
	// next take looks at the doorbell first).
	uint32_t served = 0;
	uint64_t since = 0;
	bool handed = false;

	// The idle blocks' watcher: at most one block at a time (the one whose
	// index + 1 is in w->watcher, device memory) polls the host's words
	// (the grid's terminate word and the doorbell's head slot: mapped
	// memory, a PCIe round trip each on a GPU) while it has no mailbox;
	// the other idle blocks poll only device memory: the watcher word (a
	// free role is taken with a compare-and-swap) and w->exited (a block
	// that left the loop: look at the terminate word once). A watcher that
	// takes a doorbell slot gives the role up before it serves it, so an
	// idle block takes over within its backoff. A block that let a mailbox
	// go, or took one, looks at the doorbell once more on its own (awake).
	bool watching = false, awake = true;
	uint64_t exited0 = 0;
	if (tid == 0) {
		exited0 = rc_dev_load64(&w->exited);
	}

	for (;;) {
		if (tid == 0) {
			uint64_t cmd = RC_GRID_IDLE;
			bool idle = false;
			uint32_t i = RC_GRID_NONE; // a mailbox this block just took and owns
#if !defined(__CUDA_ARCH__) && defined(RC_HOST_SIM)
			trapped = ::rc_host::trapped(); // another block faulted: the launch is dead
#endif
			bool look = trapped || cur != RC_GRID_NONE || watching || awake;
			if (!look) {
				// Idle and not the watcher: device memory only.
				if (rc_dev_load64(&w->exited) != exited0) {
					look = true; // a block left: the grid may be parking
				} else if ((i = rc_grid_ready_take(g, w)) != RC_GRID_NONE) {
					awake = true; // a mailbox handed over: serve it
				} else if (rc_dev_load64(&w->watcher) == 0 &&
					   rc_dev_cas64(&w->watcher, 0u, (uint64_t)blockIdx.x + 1u) == 0u) {
					watching = true;
					look = true;
				} else {
					idle = true;
				}
			}
			if (!look) {
				// nothing to read in mapped memory this time
			} else if (trapped || rc_sys_load_acquire(&gcb->terminate.v) != RC_TERMINATE_NONE) {
				if (cur != RC_GRID_NONE) {
					rc_fence_device();
					rc_dev_exch32(&g.claims[cur], RC_CLAIM_FREE); // the host rings every mailbox after a relaunch
					cur = RC_GRID_NONE;
				}
				if (watching) {
					rc_dev_store64(&w->watcher, 0u); // every block exits: the role is free at the relaunch
					watching = false;
				}
				cmd = RC_GRID_EXIT;
			} else if (cur == RC_GRID_NONE) {
				// The ready queue first (device memory), the doorbell then; but
				// after a hand-over the doorbell first, so that a mailbox rung
				// while every block is busy is not passed by the busy ones.
				bool empty = false;
				if (handed) {
					i = rc_grid_take(g, w, &empty);
				}
				if (i == RC_GRID_NONE) {
					i = rc_grid_ready_take(g, w);
				}
				if (i == RC_GRID_NONE && !handed) {
					i = rc_grid_take(g, w, &empty);
				}
				handed = false;
				idle = i == RC_GRID_NONE;
				if (i != RC_GRID_NONE) {
					awake = true;
					if (watching) {
						rc_fence_device();
						rc_dev_store64(&w->watcher, 0u); // busy now: another idle block watches
						watching = false;
					}
				} else if (!watching) {
					awake = false; // nothing rung: wait on device memory
				}
			}
			while (i != RC_GRID_NONE) {
				rc_mailbox_entry *e = &g.entries[i];
				const uint64_t g1 = rc_sys_load_acquire(&e->gen);
				const uint64_t c = rc_sys_load_relaxed(&e->control), ip = rc_sys_load_relaxed(&e->in),
					       op = rc_sys_load_relaxed(&e->out);
				const uint64_t g2 = rc_sys_load_acquire(&e->gen);
				if (g1 == 0 || g1 != g2 || rc_dev_load64(&g.dead[i]) == g1) {
					if (rc_grid_release(g, i)) {
						break; // nothing to serve
					}
					continue; // rung again meanwhile: read the entry again
				}
				cur = i;
				gen = g1;
				cb = (rc_control_block *)(unsigned long long)c;
				in = (rc_ring_header *)(unsigned long long)ip;
				out = (rc_ring_header *)(unsigned long long)op;
				rc_loop_tally_load(&t, cb, in, out);
				served = 0;
				since = rc_loop_now_ns();
				if (rc_dev_load64(&g.seen[i]) != gen) {
					cmd = RC_GRID_ZERO; // a new generation: its State starts zeroed
				}
				break;
			}
			if (cmd == RC_GRID_IDLE && cur != RC_GRID_NONE) {
				const uint64_t term = rc_sys_load_acquire(&cb->terminate.v);
				const uint64_t gate = rc_sys_load_acquire(&cb->gate.v);
				const bool pending = rc_sys_load_acquire(&in->tail.v) != t.in_head; // acquire: the slot's bytes
				if (term == RC_TERMINATE_NOW || (term != RC_TERMINATE_NONE && !pending)) {
					// Finished: record the dead generation, let go, then acknowledge.
					rc_dev_store64(&g.dead[cur], gen);
					rc_fence_device();
					rc_dev_exch32(&g.claims[cur], RC_CLAIM_FREE);
					rc_sys_store_relaxed(&cb->heartbeat.v, rc_loop_now_ns());
					rc_sys_store_release(&cb->terminated_ack.v, RC_TERMINATED);
					cur = RC_GRID_NONE;
				} else if (pending && (gate != 0 || term == RC_TERMINATE_DRAIN)) {
					// Backpressure: no room in the output ring: ask the host to ring
					// when it frees a slot, and let the mailbox go; never drop.
					bool room = t.out_tail - rc_sys_load_acquire(&out->head.v) < out->capacity;
					if (!room) {
						rc_sys_store_relaxed(&g.entries[cur].out_wait, 1u);
						__threadfence_system();
						room = t.out_tail - rc_sys_load_acquire(&out->head.v) < out->capacity;
					}
					if (!room) {
						if (rc_grid_release(g, cur)) {
							cur = RC_GRID_NONE;
						}
					} else if (served >= RC_GRID_QUANTUM ||
						   (served > 0 && rc_loop_now_ns() - since >= (uint64_t)RC_GRID_QUANTUM_NS)) {
						// The quantum is spent: hand the mailbox over if another
						// one waits, else serve it for another quantum.
						if (rc_grid_waiting(g, w)) {
							rc_grid_ready_put(g, w, cur);
							cur = RC_GRID_NONE;
							handed = true;
						} else {
							served = 1;
							since = rc_loop_now_ns();
							cmd = RC_GRID_HANDLE;
						}
					} else {
						served++;
						cmd = RC_GRID_HANDLE;
					}
				} else if (rc_grid_release(g, cur)) {
					cur = RC_GRID_NONE; // no work (or gated): the host rings when that changes
				}
			}
			bc[0] = cmd;
			bc[1] = t.in_head;
			bc[2] = t.out_tail;
			bc[4] = (uint64_t)(unsigned long long)cb;
			bc[5] = (uint64_t)(unsigned long long)in;
			bc[6] = (uint64_t)(unsigned long long)out;
			bc[7] = cur == RC_GRID_NONE ? 0u : (uint64_t)(unsigned long long)(slab + (uint64_t)cur * g.stride);
			if (cmd == RC_GRID_IDLE && idle) {
				// The watcher backs off between looks at mapped memory; the
				// other idle blocks between looks at device memory (cheap on a
				// GPU: a shorter cap keeps the role's hand-over quick).
				const unsigned cap = watching ? RC_GRID_BACKOFF_MAX_NS : RC_GRID_PEER_BACKOFF_MAX_NS;
				__nanosleep(backoff);
				backoff = backoff * 2 > cap ? cap : backoff * 2;
			} else if (cmd != RC_GRID_IDLE) {
				backoff = RC_LOOP_BACKOFF_MIN_NS;
			}
		}
		__syncthreads();
		const uint64_t cmd = bc[0];
		if (cmd == RC_GRID_EXIT) {
			break;
		}
		State *state = (State *)(unsigned long long)bc[7];
		if (cmd == RC_GRID_ZERO) {
			rc_block_zero(state, sizeof(State));
			rc_fence_device();
			__syncthreads();
			if (tid == 0) {
				rc_dev_store64(&g.seen[cur], gen);
			}
		} else if (cmd == RC_GRID_HANDLE) {
			rc_control_block *bcb = (rc_control_block *)(unsigned long long)bc[4];
			rc_ring_header *bin = (rc_ring_header *)(unsigned long long)bc[5];
			rc_ring_header *bout = (rc_ring_header *)(unsigned long long)bc[6];
			if (!rc_loop_serve_t<Req, Resp, State, Handler>(bcb, bin, bout, bc[1], bc[2], state, smem, bc, &t)) {
				return; // the simulated device fault: the grid dies here, no ack, no reply
			}
			if (tid == 0) {
				__threadfence_system(); // the head before the next look at the tail (see the top)
			}
		}
		__syncthreads(); // bc is rewritten by thread 0 next iteration
	}
	if (tid == 0 && !trapped) {
		const uint64_t n = rc_dev_add64(&w->exited, 1u) + 1u;
		if (n % gridDim.x == 0) {
			rc_sys_store_relaxed(&gcb->heartbeat.v, rc_loop_now_ns());
			rc_sys_store_release(&gcb->terminated_ack.v, RC_TERMINATED);
		}
	}
}

#endif

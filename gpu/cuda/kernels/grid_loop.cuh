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

// Device lanes (gpu/ring/lane.go has the protocol): a mailbox's replies
// go into a lane in device memory that another mailbox of this device
// reads, and the producer wakes the consumer on the device.

// rc_grid_wake wakes mailbox box of the grid whose words are at words
// (this grid or another one of the device): claimed FREE -> OWNED and
// handed to that grid's ready queue, or marked AGAIN for its owner.
__device__ __forceinline__ void rc_grid_wake(uint64_t words, uint64_t box) {
	rc_grid_words *w = (rc_grid_words *)(unsigned long long)words;
	if (w == 0) {
		return;
	}
	rc_grid_view g;
	g.capacity = rc_dev_load64(&w->capacity);
	if (box >= g.capacity) {
		return;
	}
	g.claims = (uint32_t *)(w + 1);
	g.seen = (uint64_t *)((unsigned char *)g.claims + rc_grid_claims_bytes(g.capacity));
	g.dead = g.seen + g.capacity;
	g.ready = (rc_ready_slot *)(g.dead + g.capacity);
	g.ready_mask = rc_dev_load64(&w->ready_cap) - 1u;
	if (rc_grid_claim(g, (uint32_t)box)) {
		rc_grid_ready_put(g, w, (uint32_t)box);
	}
}

__device__ __forceinline__ rc_lane_slot *rc_lane_at(rc_lane_header *l, uint64_t pos) {
	return (rc_lane_slot *)((unsigned char *)(l + 1) + (pos & (l->capacity - 1u)) * l->slot_size);
}

// rc_lane_ready says whether lane l has a published message at its head.
__device__ __forceinline__ bool rc_lane_ready(rc_lane_header *l) {
	const uint64_t h = rc_dev_load64(&l->head);
	return rc_dev_load_acquire64(&rc_lane_at(l, h)->seq) == h + 1u; // acquire: the slot's bytes
}

// rc_lane_handback hands the head slot of lane l back to its producer and
// wakes the producer when it waits for room.
__device__ __forceinline__ void rc_lane_handback(rc_lane_header *l) {
	const uint64_t h = rc_dev_load64(&l->head);
	rc_dev_store_release64(&rc_lane_at(l, h)->seq, h + l->capacity);
	rc_dev_store64(&l->head, h + 1u);
	rc_fence_device(); // the hand-back before the look at up_wait (the producer stores it, fences, looks again)
	if (rc_dev_load64(&l->up_wait) != 0u) {
		rc_dev_store64(&l->up_wait, 0u);
		rc_grid_wake(rc_dev_load64(&l->up_words), rc_dev_load64(&l->up_box));
	}
}

// rc_lane_close closes lane l for good (its consumer finishes): no message
// is published after it returns; a producer that waits is woken (it then
// sends to its host output ring). A producer that died while writing (a
// simulated fault) is given up on after a second.
__device__ __forceinline__ void rc_lane_close(rc_lane_header *l) {
	const uint64_t t0 = rc_loop_now_ns();
	for (;;) {
		const uint64_t s = rc_dev_cas64(&l->state, RC_LANE_OPEN, RC_LANE_CLOSED);
		if (s != RC_LANE_WRITING) {
			break;
		}
		if (rc_loop_now_ns() - t0 > 1000000000ull) {
			rc_dev_cas64(&l->state, RC_LANE_WRITING, RC_LANE_CLOSED);
			break;
		}
		__nanosleep(64);
	}
	rc_fence_device();
	if (rc_dev_load64(&l->up_wait) != 0u) {
		rc_dev_store64(&l->up_wait, 0u);
		rc_grid_wake(rc_dev_load64(&l->up_words), rc_dev_load64(&l->up_box));
	}
}

// rc_lane_load reads the lanes a mailbox reads (its LaneSet, mapped).
__device__ __forceinline__ uint32_t rc_lane_load(uint64_t set, rc_lane_header **lanes) {
	if (set == 0) {
		return 0;
	}
	rc_lane_set *ls = (rc_lane_set *)(unsigned long long)set;
	uint64_t n = rc_sys_load_acquire(&ls->count);
	if (n > RC_LANE_SLOTS_MAX) {
		n = RC_LANE_SLOTS_MAX;
	}
	for (uint64_t j = 0; j < n; j++) {
		lanes[j] = (rc_lane_header *)(unsigned long long)rc_sys_load_relaxed(&ls->lanes[j]);
	}
	return (uint32_t)n;
}

// rc_grid_publish is thread 0's end of a message: the reply rp (to lout
// when the mailbox sends down a lane, else to its output ring) gets its
// header and is published, the request rq's slot goes back (to lane src,
// or to the input ring when src is 0), and the counters move. pass is the
// upstream's error the request carried (RC_STATUS_OK: none).
template <class Resp>
__device__ __forceinline__ void rc_grid_publish(rc_control_block *cb, rc_ring_header *in, rc_ring_header *out,
						rc_lane_header *lout, rc_lane_header *src, const rc_slot_header *rq,
						rc_slot_header *rp, uint32_t status, uint32_t pass, rc_loop_tally *t) {
	uint32_t origin = 0; // the stage whose error this is (0: this kernel's own)
	if (src != 0 && pass != RC_STATUS_OK) {
		origin = ((const rc_lane_slot *)rq - 1)->origin;
	}
	const uint64_t stamp = rq->timestamp_ns;
	rp->type_id = rq->type_id;
	rp->correlation_id = rq->correlation_id;
	rp->length = status == RC_STATUS_OK ? (uint32_t)sizeof(Resp) : 0u;
	rp->status = status;
	const uint32_t flags = RC_FLAG_REPLY | (status != RC_STATUS_OK ? RC_FLAG_ERROR : 0u);
	if (lout != 0) {
		rc_lane_slot *ls = (rc_lane_slot *)rp - 1;
		ls->origin = status == RC_STATUS_OK ? 0u : (origin != 0 ? origin : (uint32_t)rc_dev_load64(&lout->stage));
		rp->flags = flags;
		rp->timestamp_ns = rc_loop_now_ns(); // the next stage's latency counts from here
		const uint64_t tl = rc_dev_load64(&lout->tail);
		rc_dev_store_release64(&ls->seq, tl + 1u); // published: the bytes are written
		rc_dev_store64(&lout->tail, tl + 1u);
		rc_dev_cas64(&lout->state, RC_LANE_WRITING, RC_LANE_OPEN);
		rc_fence_device();
		rc_grid_wake(rc_dev_load64(&lout->dn_words), rc_dev_load64(&lout->dn_box));
	} else {
		rp->flags = flags | (origin << RC_FLAG_ORIGIN_SHIFT);
		rp->timestamp_ns = stamp;
		rc_sys_store_release(&out->tail.v, ++t->out_tail); // publish the reply
	}
	if (src == 0) {
		rc_sys_store_release(&in->head.v, ++t->in_head); // hand the request slot back
	} else {
		rc_lane_handback(src);
	}
	rc_loop_count(cb, t, status, src == 0 ? stamp : 0u);
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
	// Device lanes of the mailbox in hand: the lane its replies go to (0:
	// its output ring), the lanes it reads besides its input ring (the
	// sources are taken round robin, the input ring as source nin), and
	// the source of the message being handled.
	rc_lane_header *lout = 0;
	uint64_t lset = 0;
	rc_lane_header *lin[RC_LANE_SLOTS_MAX];
	uint32_t nin = 0, rr = 0, pick = 0;
	bool lclosed = false;

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
				const uint64_t lo = rc_sys_load_relaxed(&e->lane_out), li = rc_sys_load_relaxed(&e->lanes_in);
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
				lout = (rc_lane_header *)(unsigned long long)lo;
				lset = li;
				nin = rc_lane_load(lset, lin);
				rr = 0;
				lclosed = false;
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
				const bool host = rc_sys_load_acquire(&in->tail.v) != t.in_head; // acquire: the slot's bytes
				if (term != RC_TERMINATE_NONE && !lclosed) {
					// Finishing: close the lanes read before the last look at them,
					// so that nothing is published after it.
					for (uint32_t j = 0; j < nin; j++) {
						rc_lane_close(lin[j]);
					}
					lclosed = true;
				}
				// The next source, round robin: the lanes, then the input ring (nin).
				bool pending = false;
				for (uint32_t k = 0; k <= nin && !pending; k++) {
					const uint32_t j = (rr + k) % (nin + 1u);
					if (j == nin ? host : rc_lane_ready(lin[j])) {
						pick = j;
						pending = true;
					}
				}
				if (term == RC_TERMINATE_NOW || (term != RC_TERMINATE_NONE && !pending)) {
					// Finished: record the dead generation, let go, then acknowledge.
					rc_dev_store64(&g.dead[cur], gen);
					rc_fence_device();
					rc_dev_exch32(&g.claims[cur], RC_CLAIM_FREE);
					rc_sys_store_relaxed(&cb->heartbeat.v, rc_loop_now_ns());
					rc_sys_store_release(&cb->terminated_ack.v, RC_TERMINATED);
					cur = RC_GRID_NONE;
				} else if (pending && (gate != 0 || term == RC_TERMINATE_DRAIN)) {
					// Backpressure: no room where the reply goes (the output ring,
					// or the lane): ask to be woken when a slot is freed, and let
					// the mailbox go; never drop.
					if (lout != 0 && rc_dev_load64(&lout->state) == RC_LANE_CLOSED) {
						lout = 0; // the downstream finished: the host relays from now on
					}
					bool room, want = false;
					if (lout != 0) {
						const uint64_t tl = rc_dev_load64(&lout->tail);
						room = rc_dev_load_acquire64(&rc_lane_at(lout, tl)->seq) == tl;
						if (!room) {
							rc_dev_store64(&lout->up_wait, 1u);
							rc_fence_device();
							room = rc_dev_load_acquire64(&rc_lane_at(lout, tl)->seq) == tl ||
							       rc_dev_load64(&lout->state) == RC_LANE_CLOSED;
						}
					} else {
						room = t.out_tail - rc_sys_load_acquire(&out->head.v) < out->capacity;
						if (!room) {
							rc_sys_store_relaxed(&g.entries[cur].out_wait, 1u);
							__threadfence_system();
							room = t.out_tail - rc_sys_load_acquire(&out->head.v) < out->capacity;
						}
					}
					if (!room) {
						if (rc_grid_release(g, cur)) {
							cur = RC_GRID_NONE;
						} else {
							nin = rc_lane_load(lset, lin); // asked to look again: lanes may have been added
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
							want = true;
						}
					} else {
						served++;
						want = true;
					}
					if (want && lout != 0 && rc_dev_cas64(&lout->state, RC_LANE_OPEN, RC_LANE_WRITING) != RC_LANE_OPEN) {
						lout = 0; // closed meanwhile: decide again, for the output ring
						want = false;
					}
					if (want) {
						const rc_slot_header *rq;
						rc_slot_header *rp;
						bool fits;
						uint64_t pass = RC_STATUS_OK, seqno;
						if (pick == nin) {
							rq = rc_loop_slot(in, t.in_head);
							fits = rq->length == sizeof(Req) && sizeof(rc_slot_header) + sizeof(Req) <= in->slot_size;
							seqno = t.in_head;
						} else {
							rc_lane_header *l = lin[pick];
							seqno = rc_dev_load64(&l->head);
							rq = (const rc_slot_header *)(rc_lane_at(l, seqno) + 1);
							pass = rq->status; // an upstream stage's error travels on
							fits = rq->length == sizeof(Req) &&
							       sizeof(rc_lane_slot) + sizeof(rc_slot_header) + sizeof(Req) <= l->slot_size;
						}
						if (lout != 0) {
							rp = (rc_slot_header *)(rc_lane_at(lout, rc_dev_load64(&lout->tail)) + 1);
							fits = fits && sizeof(rc_lane_slot) + sizeof(rc_slot_header) + sizeof(Resp) <= lout->slot_size;
						} else {
							rp = rc_loop_slot(out, t.out_tail);
							fits = fits && sizeof(rc_slot_header) + sizeof(Resp) <= out->slot_size;
						}
						bc[1] = (uint64_t)(unsigned long long)rq;
						bc[2] = (uint64_t)(unsigned long long)rp;
						bc[4] = pass;
						bc[5] = fits ? 1u : 0u;
						bc[6] = seqno;
						cmd = RC_GRID_HANDLE;
					}
				} else if (rc_grid_release(g, cur)) {
					cur = RC_GRID_NONE; // no work (or gated): the host rings when that changes
				} else {
					nin = rc_lane_load(lset, lin); // asked to look again: lanes may have been added
				}
			}
			bc[0] = cmd;
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
			const rc_slot_header *rq = (const rc_slot_header *)(unsigned long long)bc[1];
			rc_slot_header *rp = (rc_slot_header *)(unsigned long long)bc[2];
			if (!rc_loop_call_t<Req, Resp, State, Handler>(rq, rp, bc[5] != 0, (uint32_t)bc[4], bc[6], state, smem, bc)) {
				return; // the simulated device fault: the grid dies here, no ack, no reply
			}
			if (tid == 0) {
				rc_grid_publish<Resp>(cb, in, out, lout, pick == nin ? 0 : lin[pick], rq, rp, (uint32_t)bc[3],
						      (uint32_t)bc[4], &t);
				rr = pick + 1u;
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

// host_shim.h lets the kernel sources in this directory (oneshot.cu, and
// ring programs built on ring_loop.cuh) compile unchanged with
// g++ -std=c++20 for the host, so gpu/cuda/hostsim can run the real kernel
// code in go test on machines without a GPU.
//
// The mapping:
//   __global__, __device__, __host__    -> nothing; __forceinline__ -> inline
//   __shared__                          -> static: one copy per kernel
//                                          function, shared by the threads of
//                                          the block being run. So a host
//                                          launch runs its blocks one after
//                                          the other, and the same __global__
//                                          function must not run in two
//                                          launches at once (hostsim enforces
//                                          it). __shared__ is only used inside
//                                          __global__ functions.
//   threadIdx, blockIdx, blockDim,      -> thread_local dim3 values set by
//   gridDim                                rc_host::launch
//   __syncthreads()                     -> std::barrier over the block's
//                                          host threads (one std::thread per
//                                          CUDA thread)
//   __nanosleep(ns)                     -> std::this_thread::yield below 2 µs,
//                                          else std::this_thread::sleep_for
//   __threadfence_system()              -> seq_cst fence
//   cuda::atomic_ref<T, scope>          -> std::atomic_ref<T> (C++20); scopes
//                                          collapse to the process
//   cuda::std::memory_order_*           -> std::memory_order_*
//   __trap()                            -> marks the launch faulted (the device
//                                          ring loop then exits without an
//                                          ack; the launch reports a fault)
//   rc_loop_now_ns() (ring_loop.cuh)    -> system_clock nanoseconds (unix
//                                          epoch, like the host's stamps)
//   extern __shared__ (dynamic shared   -> rc_host::dyn_smem, a buffer per
//   memory; RC_DYNAMIC_SHARED in           block of each launch_smem call
//   ring_loop.cuh)                         (blocks run one after another, so
//                                          one buffer serves a launch)

#ifndef RINGACTOR_HOST_SHIM_H
#define RINGACTOR_HOST_SHIM_H

#ifdef __CUDACC__
#error "host_shim.h is for host compilers only; nvcc uses <cuda/atomic>"
#endif

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#define RC_HOST_SIM 1

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict

struct dim3 {
	unsigned x, y, z;
	constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace rc_host {

inline thread_local dim3 thread_idx, block_idx, block_dim, grid_dim;
inline thread_local std::barrier<> *block_barrier = nullptr;
// dyn_smem is the dynamic shared memory of the block being run (see
// launch_smem): one buffer per block per launch, so launches of the same
// kernel may run at once.
inline thread_local unsigned char *dyn_smem = nullptr;
// trap_flag is set by __trap() in a launch_smem launch: the simulated
// device's model of a device fault (see __trap below).
inline thread_local std::atomic<bool> *trap_flag = nullptr;
// mapped_reads counts the system-scope loads of ring_loop.cuh's
// rc_sys_load_* (the words host and device share in mapped pinned memory:
// a PCIe round trip each on a GPU), for the simulated device's link
// accounting (hostsim.Program.MappedReads).
inline std::atomic<unsigned long long> mapped_reads{0};

inline unsigned long long now_ns() {
	return (unsigned long long)std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::system_clock::now().time_since_epoch())
		.count();
}

// launch runs body as a kernel of grid × block: each block in turn, each
// block's threads as std::threads meeting at one std::barrier.
inline void launch(dim3 grid, dim3 block, const std::function<void()> &body) {
	const unsigned n = block.x * block.y * block.z;
	if (n == 0) {
		return;
	}
	for (unsigned bz = 0; bz < grid.z; bz++) {
		for (unsigned by = 0; by < grid.y; by++) {
			for (unsigned bx = 0; bx < grid.x; bx++) {
				std::barrier<> bar((std::ptrdiff_t)n);
				std::vector<std::thread> threads;
				threads.reserve(n);
				for (unsigned t = 0; t < n; t++) {
					threads.emplace_back([&, t] {
						thread_idx = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
						block_idx = dim3(bx, by, bz);
						block_dim = block;
						grid_dim = grid;
						block_barrier = &bar;
						body();
						block_barrier = nullptr;
					});
				}
				for (auto &th : threads) {
					th.join();
				}
			}
		}
	}
}

// launch_smem is launch with smem bytes of dynamic shared memory per block
// (64-byte aligned, zeroed), reached through dyn_smem.
// It returns whether a thread called __trap().
inline bool launch_smem(dim3 grid, dim3 block, size_t smem, const std::function<void()> &body) {
	const size_t bytes = (smem + 63) & ~(size_t)63;
	std::vector<unsigned char> buf(bytes + 64);
	unsigned char *base = buf.data() + ((64 - (reinterpret_cast<uintptr_t>(buf.data()) & 63)) & 63);
	std::atomic<bool> trapped{false};
	launch(grid, block, [&] {
		dyn_smem = base;
		trap_flag = &trapped;
		body();
		dyn_smem = nullptr;
		trap_flag = nullptr;
	});
	return trapped.load();
}

// launch_grid is launch_smem for a persistent grid: every block of grid
// runs at once (each with its own barrier and dynamic shared memory), as
// the blocks of a resident grid do on a GPU, so they may wait for each
// other. It returns whether a thread called __trap().
inline bool launch_grid(unsigned blocks, dim3 block, size_t smem, const std::function<void()> &body) {
	const unsigned n = block.x * block.y * block.z;
	if (n == 0 || blocks == 0) {
		return false;
	}
	const size_t bytes = ((smem + 63) & ~(size_t)63) + 64;
	std::vector<std::vector<unsigned char>> bufs(blocks, std::vector<unsigned char>(bytes));
	std::vector<std::unique_ptr<std::barrier<>>> bars;
	for (unsigned b = 0; b < blocks; b++) {
		bars.emplace_back(new std::barrier<>((std::ptrdiff_t)n));
	}
	std::atomic<bool> trapped{false};
	std::vector<std::thread> threads;
	threads.reserve((size_t)blocks * n);
	for (unsigned b = 0; b < blocks; b++) {
		unsigned char *raw = bufs[b].data();
		unsigned char *base = raw + ((64 - (reinterpret_cast<uintptr_t>(raw) & 63)) & 63);
		std::barrier<> *bar = bars[b].get();
		for (unsigned t = 0; t < n; t++) {
			threads.emplace_back([&, b, t, base, bar] {
				thread_idx = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
				block_idx = dim3(b, 0, 0);
				block_dim = block;
				grid_dim = dim3(blocks, 1, 1);
				block_barrier = bar;
				dyn_smem = base;
				trap_flag = &trapped;
				body();
				block_barrier = nullptr;
				dyn_smem = nullptr;
				trap_flag = nullptr;
			});
		}
	}
	for (auto &th : threads) {
		th.join();
	}
	return trapped.load();
}

// trapped reports whether a thread of this launch called __trap().
inline bool trapped() { return trap_flag != nullptr && trap_flag->load(); }

} // namespace rc_host

#define threadIdx (::rc_host::thread_idx)
#define blockIdx (::rc_host::block_idx)
#define blockDim (::rc_host::block_dim)
#define gridDim (::rc_host::grid_dim)

inline void __syncthreads() {
	if (::rc_host::block_barrier != nullptr) {
		::rc_host::block_barrier->arrive_and_wait();
	}
}

inline void __nanosleep(unsigned ns) {
	if (ns < 2000) {
		std::this_thread::yield();
	} else {
		std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
	}
}

// __trap() on a GPU aborts the kernel and leaves its context unusable
// (sticky). Here it marks the launch faulted and returns: the device ring
// loop (ring_loop.cuh) checks the mark after the handler and exits at once
// without acknowledging or publishing a reply, and the launch reports the
// fault, as the driver would.
inline void __trap() {
	if (::rc_host::trap_flag != nullptr) {
		::rc_host::trap_flag->store(true);
	}
}

inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }

namespace cuda {
enum thread_scope {
	thread_scope_system,
	thread_scope_device,
	thread_scope_block,
	thread_scope_thread,
};

template <class T, thread_scope Scope = thread_scope_system>
using atomic_ref = ::std::atomic_ref<T>;

namespace std {
using ::std::memory_order;
using ::std::memory_order_acq_rel;
using ::std::memory_order_acquire;
using ::std::memory_order_relaxed;
using ::std::memory_order_release;
using ::std::memory_order_seq_cst;
} // namespace std
} // namespace cuda

#endif

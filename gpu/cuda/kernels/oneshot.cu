// One-shot kernels for Execute: elementwise, reduce, matmul and blur, for
// float32 and float64, and the dynamic shared memory probe. go generate ./gpu/cuda compiles this file to
// oneshot.ptx; gpu/cuda/hostsim runs the same source on the host through
// host_shim.h. Entry points are extern "C" so their PTX names are stable.
//
// Launch shapes:
//   elementwise  any 1-D grid and block (grid-stride loop); out may alias a
//   reduce       two passes of rc_<op>_<t>_partial: blocks of a power-of-two
//                blockDim.x <= RC_REDUCE_BLOCK write one partial each; the
//                second pass runs the f64 (sum) or same-type (min/max)
//                partial kernel with one block over the partials. n >= 1 for
//                min/max. Sums accumulate in double.
//   matmul       block (RC_TILE, RC_TILE), grid (ceil(n/RC_TILE),
//                ceil(m/RC_TILE)); row-major C[m×n] = A[m×k]·B[k×n]
//   blur         rc_blur_rows_<t> then rc_blur_cols_<t>, any 1-D grid and
//                block; weights are the 2*radius+1 normalised Gaussian taps
//                (computed by the host); borders clamp; the intermediate
//                image is double
//   smem probe   rc_smem_probe: any 1-D grid, a power-of-two block of at
//                most 1024 threads, 4*n bytes of dynamic shared memory with
//                n >= blockDim.x
// Persistent-loop concerns (KERNEL_EXEC_TIMEOUT) do not apply: these return.

#ifdef __CUDACC__
#include <cuda/atomic>
#else
#include "host_shim.h"
#endif

#include <math.h>
#include <stdint.h>

#define RC_REDUCE_BLOCK 256
#define RC_TILE 16

typedef unsigned long long rc_size;

__device__ __forceinline__ rc_size rc_gid() { return (rc_size)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ rc_size rc_gstride() { return (rc_size)blockDim.x * gridDim.x; }

// ---- elementwise ----

#define RC_BINARY(name, T, EXPR)                                                                        \
	extern "C" __global__ void name(const T *a, const T *b, T *out, rc_size n) {                    \
		for (rc_size i = rc_gid(); i < n; i += rc_gstride()) {                                  \
			const T x = a[i], y = b[i];                                                      \
			out[i] = (EXPR);                                                                 \
		}                                                                                        \
	}

#define RC_UNARY(name, T, EXPR)                                                                         \
	extern "C" __global__ void name(const T *a, T *out, T p, rc_size n) {                           \
		for (rc_size i = rc_gid(); i < n; i += rc_gstride()) {                                  \
			const T x = a[i];                                                                \
			out[i] = (EXPR);                                                                 \
			(void)p;                                                                         \
		}                                                                                        \
	}

RC_BINARY(rc_add_f32, float, x + y)
RC_BINARY(rc_sub_f32, float, x - y)
RC_BINARY(rc_mul_f32, float, x *y)
RC_BINARY(rc_add_f64, double, x + y)
RC_BINARY(rc_sub_f64, double, x - y)
RC_BINARY(rc_mul_f64, double, x *y)
// p is the scale factor, the leaky-relu slope, unused by relu.
RC_UNARY(rc_scale_f32, float, p *x)
RC_UNARY(rc_relu_f32, float, x < 0.0f ? 0.0f : x)
RC_UNARY(rc_leaky_relu_f32, float, x > 0.0f ? x : p * x)
RC_UNARY(rc_scale_f64, double, p *x)
RC_UNARY(rc_relu_f64, double, x < 0.0 ? 0.0 : x)
RC_UNARY(rc_leaky_relu_f64, double, x > 0.0 ? x : p * x)

// ---- reduce ----

__device__ __forceinline__ double rc_os_min(double a, double b) { return a != a ? a : (b != b ? b : (b < a ? b : a)); }
__device__ __forceinline__ double rc_os_max(double a, double b) { return a != a ? a : (b != b ? b : (b > a ? b : a)); }

#define RC_OP_SUM 0
#define RC_OP_MIN 1
#define RC_OP_MAX 2

template <int Op>
__device__ __forceinline__ double rc_combine(double a, double b) {
	return Op == RC_OP_SUM ? a + b : (Op == RC_OP_MIN ? rc_os_min(a, b) : rc_os_max(a, b));
}

// rc_reduce_block reduces in[0..n) over the grid into partials[blockIdx.x].
template <int Op, class In, class Out>
__device__ void rc_reduce_block(const In *in, Out *partials, rc_size n, double *red) {
	const unsigned tid = threadIdx.x;
	double acc = Op == RC_OP_SUM ? 0.0 : (Op == RC_OP_MIN ? (double)INFINITY : -(double)INFINITY);
	for (rc_size i = rc_gid(); i < n; i += rc_gstride()) {
		acc = rc_combine<Op>(acc, (double)in[i]);
	}
	red[tid] = acc;
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
		if (tid < s) {
			red[tid] = rc_combine<Op>(red[tid], red[tid + s]);
		}
		__syncthreads();
	}
	if (tid == 0) {
		partials[blockIdx.x] = (Out)red[0];
	}
}

#define RC_REDUCE(name, OP, In, Out)                                                                    \
	extern "C" __global__ void name(const In *in, Out *partials, rc_size n) {                       \
		__shared__ double red[RC_REDUCE_BLOCK];                                                  \
		rc_reduce_block<OP, In, Out>(in, partials, n, red);                                      \
	}

RC_REDUCE(rc_sum_f32_partial, RC_OP_SUM, float, double)
RC_REDUCE(rc_sum_f64_partial, RC_OP_SUM, double, double)
RC_REDUCE(rc_min_f32_partial, RC_OP_MIN, float, float)
RC_REDUCE(rc_min_f64_partial, RC_OP_MIN, double, double)
RC_REDUCE(rc_max_f32_partial, RC_OP_MAX, float, float)
RC_REDUCE(rc_max_f64_partial, RC_OP_MAX, double, double)

// ---- matmul (shared-memory tiles) ----

template <class T>
__device__ void rc_matmul_tile(const T *A, const T *B, T *C, int m, int k, int n, T (*as)[RC_TILE],
			       T (*bs)[RC_TILE]) {
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int row = blockIdx.y * RC_TILE + ty, col = blockIdx.x * RC_TILE + tx;
	T acc = 0;
	for (int t = 0; t < k; t += RC_TILE) {
		as[ty][tx] = (row < m && t + tx < k) ? A[(rc_size)row * k + t + tx] : (T)0;
		bs[ty][tx] = (t + ty < k && col < n) ? B[(rc_size)(t + ty) * n + col] : (T)0;
		__syncthreads();
		for (int j = 0; j < RC_TILE; j++) {
			acc += as[ty][j] * bs[j][tx];
		}
		__syncthreads();
	}
	if (row < m && col < n) {
		C[(rc_size)row * n + col] = acc;
	}
}

extern "C" __global__ void rc_matmul_f32(const float *A, const float *B, float *C, int m, int k, int n) {
	__shared__ float as[RC_TILE][RC_TILE];
	__shared__ float bs[RC_TILE][RC_TILE];
	rc_matmul_tile<float>(A, B, C, m, k, n, as, bs);
}

extern "C" __global__ void rc_matmul_f64(const double *A, const double *B, double *C, int m, int k, int n) {
	__shared__ double as[RC_TILE][RC_TILE];
	__shared__ double bs[RC_TILE][RC_TILE];
	rc_matmul_tile<double>(A, B, C, m, k, n, as, bs);
}

// ---- blur (separable Gaussian: rows, then columns) ----

__device__ __forceinline__ int rc_clamp(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

template <class T>
__device__ void rc_blur_rows(const T *src, double *tmp, const double *w, int h, int wd, int c, int radius) {
	const rc_size total = (rc_size)h * wd * c;
	for (rc_size i = rc_gid(); i < total; i += rc_gstride()) {
		const int ch = (int)(i % c);
		const int x = (int)((i / c) % wd);
		const rc_size rowBase = (i / ((rc_size)wd * c)) * wd * c;
		double acc = 0.0;
		for (int t = -radius; t <= radius; t++) {
			acc += w[t + radius] * (double)src[rowBase + (rc_size)rc_clamp(x + t, 0, wd - 1) * c + ch];
		}
		tmp[i] = acc;
	}
}

template <class T>
__device__ void rc_blur_cols(const double *tmp, T *dst, const double *w, int h, int wd, int c, int radius) {
	const rc_size total = (rc_size)h * wd * c;
	const rc_size stride = (rc_size)wd * c;
	for (rc_size i = rc_gid(); i < total; i += rc_gstride()) {
		const int y = (int)(i / stride);
		const rc_size inRow = i % stride;
		double acc = 0.0;
		for (int t = -radius; t <= radius; t++) {
			acc += w[t + radius] * tmp[(rc_size)rc_clamp(y + t, 0, h - 1) * stride + inRow];
		}
		dst[i] = (T)acc;
	}
}

extern "C" __global__ void rc_blur_rows_f32(const float *src, double *tmp, const double *w, int h, int wd, int c,
					    int radius) {
	rc_blur_rows<float>(src, tmp, w, h, wd, c, radius);
}
extern "C" __global__ void rc_blur_cols_f32(const double *tmp, float *dst, const double *w, int h, int wd, int c,
					    int radius) {
	rc_blur_cols<float>(tmp, dst, w, h, wd, c, radius);
}
extern "C" __global__ void rc_blur_rows_f64(const double *src, double *tmp, const double *w, int h, int wd, int c,
					    int radius) {
	rc_blur_rows<double>(src, tmp, w, h, wd, c, radius);
}
extern "C" __global__ void rc_blur_cols_f64(const double *tmp, double *dst, const double *w, int h, int wd, int c,
					    int radius) {
	rc_blur_cols<double>(tmp, dst, w, h, wd, c, radius);
}

// ---- dynamic shared memory probe ----

// RC_OS_SMEM declares name as the launch's dynamic shared memory, an array
// of T (host_shim.h: the block's buffer of rc_host::launch_smem).
#ifdef __CUDACC__
#define RC_OS_SMEM(T, name) extern __shared__ __align__(16) T name[]
#else
#define RC_OS_SMEM(T, name) T *name = reinterpret_cast<T *>(::rc_host::dyn_smem)
#endif

// rc_smem_word is the word rc_smem_probe stores at index i of block b.
__host__ __device__ __forceinline__ unsigned rc_smem_word(unsigned b, unsigned i) {
	return ((i + 1u) * 2654435761u) ^ (b * 0x9E3779B9u + 0x7F4A7C15u);
}

// rc_smem_probe proves a launch's dynamic shared memory usable: each block
// fills its n words with rc_smem_word(block, i), each thread then sums the
// words at the mirrored indices (written by other threads), the block
// reduces those sums in the same memory and thread 0 writes the total to
// out[blockIdx.x]: the sum of rc_smem_word(blockIdx.x, i) over i < n,
// modulo 2^32, when every word held. A launch with n < blockDim.x writes 0.
extern "C" __global__ void rc_smem_probe(unsigned *out, unsigned n) {
	RC_OS_SMEM(unsigned, words);
	const unsigned tid = threadIdx.x, nt = blockDim.x, b = blockIdx.x;
	if (n < nt) {
		if (tid == 0) {
			out[b] = 0u;
		}
		return;
	}
	for (unsigned i = tid; i < n; i += nt) {
		words[i] = rc_smem_word(b, i);
	}
	__syncthreads();
	unsigned sum = 0u;
	for (unsigned i = tid; i < n; i += nt) {
		sum += words[n - 1u - i];
	}
	__syncthreads();
	words[tid] = sum;
	__syncthreads();
	for (unsigned s = nt / 2u; s > 0u; s >>= 1) {
		if (tid < s) {
			words[tid] += words[tid + s];
		}
		__syncthreads();
	}
	if (tid == 0) {
		out[b] = words[0];
	}
}

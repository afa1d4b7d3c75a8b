//go:build linux && cgo

// The kernel sources of ../kernels compiled for the host through
// host_shim.h, and the C API of hostsim.h around them.
//
// cgo's build cache only sees files in this directory, so kernels_stamp.h
// carries a hash of the kernel sources: editing them without
// `go generate ./gpu/cuda/hostsim` fails TestKernelStamp, and regenerating
// changes this package's files, which rebuilds it.

#include "../kernels/host_shim.h"

#include "../kernels/oneshot.cu"

#include "hostsim.h"
#include "kernels_stamp.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace {
std::mutex oneshot_mu;

bool pow2(unsigned v) { return v != 0 && (v & (v - 1)) == 0; }
} // namespace

namespace {
// Two passes: grid blocks write partials, then one block reduces them.
template <class T, class P>
int reduce2(void (*k)(const T *, P *, rc_size), void (*final_k)(const P *, P *, rc_size), const T *a,
		   uint64_t n, unsigned grid, unsigned block, double *result) {
	if (!pow2(block) || block > RC_REDUCE_BLOCK || grid == 0) {
		return -1;
	}
	std::lock_guard<std::mutex> lk(oneshot_mu);
	std::vector<P> partials(grid);
	P out{};
	rc_host::launch(dim3(grid), dim3(block), [&] { k(a, partials.data(), n); });
	rc_host::launch(dim3(1), dim3(block), [&] { final_k(partials.data(), &out, grid); });
	*result = (double)out;
	return 0;
}

} // namespace

namespace {
// Parameter slots of rc_hs_launch, read by index (the evaluation order of
// function arguments is unspecified, so no reader with state).
template <class T> T arg_ptr(const uint64_t *a, int i) { return reinterpret_cast<T>(static_cast<uintptr_t>(a[i])); }
float arg_f32(const uint64_t *a, int i) {
	const uint32_t u = static_cast<uint32_t>(a[i]);
	float f;
	std::memcpy(&f, &u, sizeof f);
	return f;
}
double arg_f64(const uint64_t *a, int i) {
	double d;
	std::memcpy(&d, &a[i], sizeof d);
	return d;
}
int arg_i32(const uint64_t *a, int i) { return static_cast<int>(static_cast<uint32_t>(a[i])); }

struct kernel_entry {
	const char *name;
	int nargs;
	void (*call)(const uint64_t *a);
};

#define RC_HS_BIN(k, T) {#k, 4, [](const uint64_t *a) { k(arg_ptr<const T *>(a, 0), arg_ptr<const T *>(a, 1), arg_ptr<T *>(a, 2), a[3]); }}
#define RC_HS_UN32(k) {#k, 4, [](const uint64_t *a) { k(arg_ptr<const float *>(a, 0), arg_ptr<float *>(a, 1), arg_f32(a, 2), a[3]); }}
#define RC_HS_UN64(k) {#k, 4, [](const uint64_t *a) { k(arg_ptr<const double *>(a, 0), arg_ptr<double *>(a, 1), arg_f64(a, 2), a[3]); }}
#define RC_HS_RED(k, In, Out) {#k, 3, [](const uint64_t *a) { k(arg_ptr<const In *>(a, 0), arg_ptr<Out *>(a, 1), a[2]); }}
#define RC_HS_MM(k, T) {#k, 6, [](const uint64_t *a) { k(arg_ptr<const T *>(a, 0), arg_ptr<const T *>(a, 1), arg_ptr<T *>(a, 2), arg_i32(a, 3), arg_i32(a, 4), arg_i32(a, 5)); }}
#define RC_HS_BLUR(k, S, D) {#k, 7, [](const uint64_t *a) { k(arg_ptr<const S *>(a, 0), arg_ptr<D *>(a, 1), arg_ptr<const double *>(a, 2), arg_i32(a, 3), arg_i32(a, 4), arg_i32(a, 5), arg_i32(a, 6)); }}

const kernel_entry kernel_table[] = {
	RC_HS_BIN(rc_add_f32, float), RC_HS_BIN(rc_sub_f32, float), RC_HS_BIN(rc_mul_f32, float),
	RC_HS_BIN(rc_add_f64, double), RC_HS_BIN(rc_sub_f64, double), RC_HS_BIN(rc_mul_f64, double),
	RC_HS_UN32(rc_scale_f32), RC_HS_UN32(rc_relu_f32), RC_HS_UN32(rc_leaky_relu_f32),
	RC_HS_UN64(rc_scale_f64), RC_HS_UN64(rc_relu_f64), RC_HS_UN64(rc_leaky_relu_f64),
	RC_HS_RED(rc_sum_f32_partial, float, double), RC_HS_RED(rc_sum_f64_partial, double, double),
	RC_HS_RED(rc_min_f32_partial, float, float), RC_HS_RED(rc_min_f64_partial, double, double),
	RC_HS_RED(rc_max_f32_partial, float, float), RC_HS_RED(rc_max_f64_partial, double, double),
	RC_HS_MM(rc_matmul_f32, float), RC_HS_MM(rc_matmul_f64, double),
	RC_HS_BLUR(rc_blur_rows_f32, float, double), RC_HS_BLUR(rc_blur_cols_f32, double, float),
	RC_HS_BLUR(rc_blur_rows_f64, double, double), RC_HS_BLUR(rc_blur_cols_f64, double, double),
	{"rc_smem_probe", 2, [](const uint64_t *a) { rc_smem_probe(arg_ptr<unsigned *>(a, 0), static_cast<unsigned>(a[1])); }},
};

const kernel_entry *find_kernel(const char *name) {
	for (const auto &e : kernel_table) {
		if (std::strcmp(e.name, name) == 0) {
			return &e;
		}
	}
	return nullptr;
}
} // namespace

extern "C" {

void *rc_hs_alloc(size_t size) {
	size = (size + 63) & ~(size_t)63;
	if (size == 0) {
		size = 64;
	}
	void *p = std::aligned_alloc(64, size);
	if (p != nullptr) {
		std::memset(p, 0, size);
	}
	return p;
}

void rc_hs_free(void *p) { std::free(p); }

int rc_hs_elementwise_f32(int op, const float *a, const float *b, float *out, float p, uint64_t n, unsigned grid,
			  unsigned block) {
	std::lock_guard<std::mutex> lk(oneshot_mu);
	std::function<void()> body;
	switch (op) {
	case RC_HS_ADD: body = [&] { rc_add_f32(a, b, out, n); }; break;
	case RC_HS_SUB: body = [&] { rc_sub_f32(a, b, out, n); }; break;
	case RC_HS_MUL: body = [&] { rc_mul_f32(a, b, out, n); }; break;
	case RC_HS_SCALE: body = [&] { rc_scale_f32(a, out, p, n); }; break;
	case RC_HS_RELU: body = [&] { rc_relu_f32(a, out, p, n); }; break;
	case RC_HS_LEAKY_RELU: body = [&] { rc_leaky_relu_f32(a, out, p, n); }; break;
	default: return -1;
	}
	rc_host::launch(dim3(grid), dim3(block), body);
	return 0;
}

int rc_hs_elementwise_f64(int op, const double *a, const double *b, double *out, double p, uint64_t n, unsigned grid,
			  unsigned block) {
	std::lock_guard<std::mutex> lk(oneshot_mu);
	std::function<void()> body;
	switch (op) {
	case RC_HS_ADD: body = [&] { rc_add_f64(a, b, out, n); }; break;
	case RC_HS_SUB: body = [&] { rc_sub_f64(a, b, out, n); }; break;
	case RC_HS_MUL: body = [&] { rc_mul_f64(a, b, out, n); }; break;
	case RC_HS_SCALE: body = [&] { rc_scale_f64(a, out, p, n); }; break;
	case RC_HS_RELU: body = [&] { rc_relu_f64(a, out, p, n); }; break;
	case RC_HS_LEAKY_RELU: body = [&] { rc_leaky_relu_f64(a, out, p, n); }; break;
	default: return -1;
	}
	rc_host::launch(dim3(grid), dim3(block), body);
	return 0;
}

int rc_hs_reduce_f32(int op, const float *a, uint64_t n, unsigned grid, unsigned block, double *result) {
	switch (op) {
	case RC_HS_SUM: return reduce2<float, double>(rc_sum_f32_partial, rc_sum_f64_partial, a, n, grid, block, result);
	case RC_HS_MIN: return reduce2<float, float>(rc_min_f32_partial, rc_min_f32_partial, a, n, grid, block, result);
	case RC_HS_MAX: return reduce2<float, float>(rc_max_f32_partial, rc_max_f32_partial, a, n, grid, block, result);
	}
	return -1;
}

int rc_hs_reduce_f64(int op, const double *a, uint64_t n, unsigned grid, unsigned block, double *result) {
	switch (op) {
	case RC_HS_SUM: return reduce2<double, double>(rc_sum_f64_partial, rc_sum_f64_partial, a, n, grid, block, result);
	case RC_HS_MIN: return reduce2<double, double>(rc_min_f64_partial, rc_min_f64_partial, a, n, grid, block, result);
	case RC_HS_MAX: return reduce2<double, double>(rc_max_f64_partial, rc_max_f64_partial, a, n, grid, block, result);
	}
	return -1;
}

int rc_hs_matmul_f32(const float *a, const float *b, float *c, int m, int k, int n) {
	std::lock_guard<std::mutex> lk(oneshot_mu);
	rc_host::launch(dim3((n + RC_TILE - 1) / RC_TILE, (m + RC_TILE - 1) / RC_TILE), dim3(RC_TILE, RC_TILE),
			[&] { rc_matmul_f32(a, b, c, m, k, n); });
	return 0;
}

int rc_hs_matmul_f64(const double *a, const double *b, double *c, int m, int k, int n) {
	std::lock_guard<std::mutex> lk(oneshot_mu);
	rc_host::launch(dim3((n + RC_TILE - 1) / RC_TILE, (m + RC_TILE - 1) / RC_TILE), dim3(RC_TILE, RC_TILE),
			[&] { rc_matmul_f64(a, b, c, m, k, n); });
	return 0;
}

int rc_hs_blur_f32(const float *src, float *dst, const double *w, int h, int wd, int c, int radius, unsigned grid,
		   unsigned block) {
	std::lock_guard<std::mutex> lk(oneshot_mu);
	std::vector<double> tmp((size_t)h * wd * c);
	rc_host::launch(dim3(grid), dim3(block), [&] { rc_blur_rows_f32(src, tmp.data(), w, h, wd, c, radius); });
	rc_host::launch(dim3(grid), dim3(block), [&] { rc_blur_cols_f32(tmp.data(), dst, w, h, wd, c, radius); });
	return 0;
}

int rc_hs_blur_f64(const double *src, double *dst, const double *w, int h, int wd, int c, int radius, unsigned grid,
		   unsigned block) {
	std::lock_guard<std::mutex> lk(oneshot_mu);
	std::vector<double> tmp((size_t)h * wd * c);
	rc_host::launch(dim3(grid), dim3(block), [&] { rc_blur_rows_f64(src, tmp.data(), w, h, wd, c, radius); });
	rc_host::launch(dim3(grid), dim3(block), [&] { rc_blur_cols_f64(tmp.data(), dst, w, h, wd, c, radius); });
	return 0;
}

int rc_hs_kernel_params(const char *name) {
	const kernel_entry *e = find_kernel(name);
	return e == nullptr ? -1 : e->nargs;
}

int rc_hs_smem_probe(unsigned *out, unsigned grid, unsigned block, unsigned n) {
	if (!pow2(block) || block > 1024 || grid == 0) {
		return -1;
	}
	std::lock_guard<std::mutex> lk(oneshot_mu);
	rc_host::launch_smem(dim3(grid), dim3(block), (size_t)n * sizeof(unsigned), [&] { rc_smem_probe(out, n); });
	return 0;
}

int rc_hs_launch(const char *name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		 size_t smem, const uint64_t *args, int nargs) {
	const kernel_entry *e = find_kernel(name);
	if (e == nullptr) {
		return RC_HS_LAUNCH_UNKNOWN;
	}
	if (nargs != e->nargs) {
		return RC_HS_LAUNCH_NARGS;
	}
	if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || (uint64_t)bx * by * bz > 1024) {
		return RC_HS_LAUNCH_SHAPE;
	}
	std::vector<uint64_t> a(args, args + nargs);
	std::lock_guard<std::mutex> lk(oneshot_mu);
	rc_host::launch_smem(dim3(gx, gy, gz), dim3(bx, by, bz), smem, [&] { e->call(a.data()); });
	return RC_HS_LAUNCH_OK;
}

void rc_hs_copy_in(uint64_t dst, const void *src, size_t n) {
	std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(dst)), src, n);
}

void rc_hs_copy_out(void *dst, uint64_t src, size_t n) {
	std::memcpy(dst, reinterpret_cast<const void *>(static_cast<uintptr_t>(src)), n);
}

void rc_hs_free_addr(uint64_t p) { std::free(reinterpret_cast<void *>(static_cast<uintptr_t>(p))); }

const char *rc_hs_kernels_stamp(void) { return RC_KERNELS_SHA256; }

} // extern "C"

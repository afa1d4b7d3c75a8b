// C API of the host-compiled kernels (kernels_host.cc), called from sim.go
// and oneshot.go.

#ifndef RINGACTOR_HOSTSIM_H
#define RINGACTOR_HOSTSIM_H

#include <stddef.h>
#include <stdint.h>

#include "../kernels/ring_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

// rc_hs_alloc returns size bytes (rounded up to 64), 64-byte aligned and
// zeroed, or NULL.
void *rc_hs_alloc(size_t size);
void rc_hs_free(void *p);

typedef struct rc_hs_loop rc_hs_loop;

// rc_hs_loop_start launches rc_ring_kernel with one block of threads host
// threads on a background std::thread. It returns NULL when another
// persistent loop is running in this process (its __shared__ state is
// static on the host).
rc_hs_loop *rc_hs_loop_start(rc_control_block *cb, rc_ring_header *in, rc_ring_header *out, unsigned threads);
// rc_hs_loop_join waits for the loop to exit and frees l.
void rc_hs_loop_join(rc_hs_loop *l);

// One-shot launches (serialised with each other). op: RC_HS_*.
enum {
	RC_HS_ADD = 0,
	RC_HS_SUB = 1,
	RC_HS_MUL = 2,
	RC_HS_SCALE = 3,
	RC_HS_RELU = 4,
	RC_HS_LEAKY_RELU = 5,
	RC_HS_SUM = 0,
	RC_HS_MIN = 1,
	RC_HS_MAX = 2,
};
// Return 0, or -1 for an unknown op or bad launch shape.
int rc_hs_elementwise_f32(int op, const float *a, const float *b, float *out, float p, uint64_t n, unsigned grid,
			  unsigned block);
int rc_hs_elementwise_f64(int op, const double *a, const double *b, double *out, double p, uint64_t n, unsigned grid,
			  unsigned block);
int rc_hs_reduce_f32(int op, const float *a, uint64_t n, unsigned grid, unsigned block, double *result);
int rc_hs_reduce_f64(int op, const double *a, uint64_t n, unsigned grid, unsigned block, double *result);
int rc_hs_matmul_f32(const float *a, const float *b, float *c, int m, int k, int n);
int rc_hs_matmul_f64(const double *a, const double *b, double *c, int m, int k, int n);
int rc_hs_blur_f32(const float *src, float *dst, const double *w, int h, int wd, int c, int radius, unsigned grid,
		   unsigned block);
int rc_hs_blur_f64(const double *src, double *dst, const double *w, int h, int wd, int c, int radius, unsigned grid,
		   unsigned block);

// rc_hs_kernels_stamp is RC_KERNELS_SHA256 of kernels_stamp.h as compiled.
const char *rc_hs_kernels_stamp(void);

#ifdef __cplusplus
}
#endif

#endif

// C API of the host-compiled kernels (kernels_host.cc), called from sim.go
// and oneshot.go.

#ifndef RINGACTOR_HOSTSIM_H
#define RINGACTOR_HOSTSIM_H

#include <stddef.h>
#include <stdint.h>

#include "../kernels/ring_abi_gen.h"

#ifdef __cplusplus
extern "C" {
#endif

// rc_hs_alloc returns size bytes (rounded up to 64), 64-byte aligned and
// zeroed, or NULL.
void *rc_hs_alloc(size_t size);
void rc_hs_free(void *p);

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

// rc_hs_smem_probe runs rc_smem_probe over grid blocks of block threads (a
// power of two up to 1024) with n words of dynamic shared memory each, one
// result per block in out. It returns 0, or -1 for a bad launch shape.
int rc_hs_smem_probe(unsigned *out, unsigned grid, unsigned block, unsigned n);

// rc_hs_launch runs the kernel whose extern "C" name is name over grid ×
// block with smem bytes of dynamic shared memory per block, unpacking its parameters from args (one 8-byte slot each, as
// cuLaunchKernel's callers pack them: pointers and 64-bit integers whole,
// float and int in the low 4 bytes). It returns RC_HS_LAUNCH_* codes.
// One-shot kernels are serialised with each other. (Device ring kernels are
// programs built for the host: see program.go's LaunchProgram.)
enum {
	RC_HS_LAUNCH_OK = 0,
	RC_HS_LAUNCH_UNKNOWN = -1,  // no kernel of that name
	RC_HS_LAUNCH_NARGS = -2,    // wrong number of parameters
	RC_HS_LAUNCH_SHAPE = -3,    // empty grid or block, or a block over 1024 threads
	RC_HS_LAUNCH_BUSY = -4,     // no longer returned
};
int rc_hs_launch(const char *name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		 size_t smem, const uint64_t *args, int nargs);
// rc_hs_kernel_params returns the parameter count of kernel name, or -1.
int rc_hs_kernel_params(const char *name);
// rc_hs_copy copies n bytes between addresses given as integers (simulated
// device pointers are host addresses).
void rc_hs_copy_in(uint64_t dst, const void *src, size_t n);
void rc_hs_copy_out(void *dst, uint64_t src, size_t n);
// rc_hs_free_addr is rc_hs_free of an address given as an integer.
void rc_hs_free_addr(uint64_t p);

// rc_hs_kernels_stamp is RC_KERNELS_SHA256 of kernels_stamp.h as compiled.
const char *rc_hs_kernels_stamp(void);

#ifdef __cplusplus
}
#endif

#endif

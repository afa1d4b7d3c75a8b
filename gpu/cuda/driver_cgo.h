// Driver-API types and the function-pointer table of libcuda.so.1, declared
// here so that no CUDA header is needed to build. Only what gpu/cuda uses.

#ifndef RINGACTOR_CUDA_DRIVER_CGO_H
#define RINGACTOR_CUDA_DRIVER_CGO_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_attribute;
typedef int CUjit_option;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef int CUmemPool_attribute;
typedef int CUfunction_attribute;

// rc_cuda_api holds the resolved entry points. Field names are the symbol
// names without their _v2 suffix.
typedef struct rc_cuda_api {
	void *handle;
	CUresult (*cuInit)(unsigned int);
	CUresult (*cuDriverGetVersion)(int *);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned int, CUjit_option *, void **);
	CUresult (*cuModuleUnload)(CUmodule);
	CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int,
		unsigned int, unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
	CUresult (*cuStreamCreate)(CUstream *, unsigned int);
	CUresult (*cuStreamDestroy)(CUstream);
	CUresult (*cuStreamSynchronize)(CUstream);
	CUresult (*cuStreamQuery)(CUstream);
	CUresult (*cuEventCreate)(CUevent *, unsigned int);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*cuEventDestroy)(CUevent);
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemHostAlloc)(void **, size_t, unsigned int);
	CUresult (*cuMemFreeHost)(void *);
	CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned int);
	CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*cuMemGetInfo)(size_t *, size_t *);
	CUresult (*cuGetErrorName)(CUresult, const char **);
	CUresult (*cuGetErrorString)(CUresult, const char **);
	// Optional entry points (CUDA 11.2+, the stream-ordered allocator):
	// NULL when the driver lacks them; their trampolines then return
	// CUDA_ERROR_NOT_SUPPORTED without calling anything.
	CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
	CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, CUmemPool_attribute, void *);
	CUresult (*cuMemAllocFromPoolAsync)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
	// Optional too: the occupancy calculator that sizes a ring program's grid.
	CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
	// Optional too: per-function attributes (the shared-memory carveout and
	// opt-in dynamic shared memory) and stream priorities.
	CUresult (*cuFuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
	CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
	CUresult (*cuCtxGetStreamPriorityRange)(int *, int *);
	CUresult (*cuStreamCreateWithPriority)(CUstream *, unsigned int, int);
} rc_cuda_api;

// Stages at which rc_cuda_open can fail.
#define RC_OPEN_DLOPEN 1 // dlopen failed: no such library, or it cannot be loaded
#define RC_OPEN_DLSYM 2  // an entry point is missing: the driver is too old
#define RC_OPEN_ALLOC 3  // out of host memory

// rc_cuda_open dlopens path and resolves every entry point. On success it
// returns a calloc'd table (never freed: the library stays loaded) and
// writes the resolved file name of the library into libpath. On failure it
// returns NULL, sets *stage to an RC_OPEN_ value and writes the reason
// (dlerror's text, or the missing symbol) into err. Runs entirely in C so
// that dlerror is read on the thread that caused it.
rc_cuda_api *rc_cuda_open(const char *path, int *stage, char *err, size_t errlen, char *libpath, size_t libpathlen);

// rc_cuda_symbol_count is the number of entry points in rc_cuda_api.
int rc_cuda_symbol_count(void);

// rc_cuda_symbol_name is the dlsym name of entry point i.
const char *rc_cuda_symbol_name(int i);

// rc_cuda_optional_count and rc_cuda_optional_name list the optional entry
// points; rc_cuda_has_stream_ordered reports whether all of them resolved.
int rc_cuda_optional_count(void);
const char *rc_cuda_optional_name(int i);
int rc_cuda_has_stream_ordered(rc_cuda_api *a);

// Call trampolines: Go cannot call a C function pointer directly.
CUresult rc_cuInit(rc_cuda_api *a, unsigned int flags);
CUresult rc_cuDriverGetVersion(rc_cuda_api *a, int *v);
CUresult rc_cuDeviceGetCount(rc_cuda_api *a, int *n);
CUresult rc_cuDeviceGet(rc_cuda_api *a, CUdevice *d, int ordinal);
CUresult rc_cuDeviceGetName(rc_cuda_api *a, char *name, int len, CUdevice d);
CUresult rc_cuDeviceGetAttribute(rc_cuda_api *a, int *v, CUdevice_attribute attr, CUdevice d);
CUresult rc_cuDeviceTotalMem(rc_cuda_api *a, size_t *bytes, CUdevice d);
CUresult rc_cuDevicePrimaryCtxRetain(rc_cuda_api *a, CUcontext *c, CUdevice d);
CUresult rc_cuDevicePrimaryCtxRelease(rc_cuda_api *a, CUdevice d);
CUresult rc_cuCtxSetCurrent(rc_cuda_api *a, CUcontext c);
CUresult rc_cuCtxSynchronize(rc_cuda_api *a);
CUresult rc_cuModuleLoadDataEx(rc_cuda_api *a, CUmodule *m, const void *image,
	char *infolog, size_t infolen, char *errlog, size_t errlen, int verbose);
CUresult rc_cuModuleUnload(rc_cuda_api *a, CUmodule m);
CUresult rc_cuModuleGetFunction(rc_cuda_api *a, CUfunction *f, CUmodule m, const char *name);
CUresult rc_cuLaunchKernel(rc_cuda_api *a, CUfunction f,
	unsigned int gx, unsigned int gy, unsigned int gz,
	unsigned int bx, unsigned int by, unsigned int bz,
	unsigned int shared, CUstream s, unsigned long long *args, int nargs);
CUresult rc_cuStreamCreate(rc_cuda_api *a, CUstream *s, unsigned int flags);
CUresult rc_cuStreamDestroy(rc_cuda_api *a, CUstream s);
CUresult rc_cuStreamSynchronize(rc_cuda_api *a, CUstream s);
CUresult rc_cuStreamQuery(rc_cuda_api *a, CUstream s);
CUresult rc_cuEventCreate(rc_cuda_api *a, CUevent *e, unsigned int flags);
CUresult rc_cuEventRecord(rc_cuda_api *a, CUevent e, CUstream s);
CUresult rc_cuEventSynchronize(rc_cuda_api *a, CUevent e);
CUresult rc_cuEventElapsedTime(rc_cuda_api *a, float *ms, CUevent start, CUevent end);
CUresult rc_cuEventDestroy(rc_cuda_api *a, CUevent e);
CUresult rc_cuMemAlloc(rc_cuda_api *a, CUdeviceptr *p, size_t bytes);
CUresult rc_cuMemFree(rc_cuda_api *a, CUdeviceptr p);
CUresult rc_cuMemHostAlloc(rc_cuda_api *a, void **p, size_t bytes, unsigned int flags);
CUresult rc_cuMemFreeHost(rc_cuda_api *a, void *p);
CUresult rc_cuMemHostGetDevicePointer(rc_cuda_api *a, CUdeviceptr *d, void *p, unsigned int flags);
CUresult rc_cuMemcpyHtoDAsync(rc_cuda_api *a, CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
CUresult rc_cuMemcpyDtoHAsync(rc_cuda_api *a, void *dst, CUdeviceptr src, size_t bytes, CUstream s);
CUresult rc_cuMemGetInfo(rc_cuda_api *a, size_t *free_bytes, size_t *total_bytes);
CUresult rc_cuDeviceGetDefaultMemPool(rc_cuda_api *a, CUmemoryPool *p, CUdevice d);
CUresult rc_cuMemPoolSetReleaseThreshold(rc_cuda_api *a, CUmemoryPool p, unsigned long long bytes);
CUresult rc_cuMemAllocFromPoolAsync(rc_cuda_api *a, CUdeviceptr *d, size_t bytes, CUmemoryPool p, CUstream s);
CUresult rc_cuMemFreeAsync(rc_cuda_api *a, CUdeviceptr d, CUstream s);
CUresult rc_cuOccupancyMaxActiveBlocksPerMultiprocessor(rc_cuda_api *a, int *n, CUfunction f, int block, size_t smem);
CUresult rc_cuFuncGetAttribute(rc_cuda_api *a, int *v, CUfunction_attribute attr, CUfunction f);
CUresult rc_cuFuncSetAttribute(rc_cuda_api *a, CUfunction f, CUfunction_attribute attr, int v);
CUresult rc_cuCtxGetStreamPriorityRange(rc_cuda_api *a, int *least, int *greatest);
CUresult rc_cuStreamCreateWithPriority(rc_cuda_api *a, CUstream *s, unsigned int flags, int priority);
// rc_cuGetErrorName and rc_cuGetErrorString return NULL for a code the
// driver does not know.
const char *rc_cuGetErrorName(rc_cuda_api *a, CUresult r);
const char *rc_cuGetErrorString(rc_cuda_api *a, CUresult r);

// RC_MAX_KERNEL_ARGS bounds the parameters rc_cuLaunchKernel accepts; more
// gives CUDA_ERROR_INVALID_VALUE without calling the driver.
#define RC_MAX_KERNEL_ARGS 64

#endif

//go:build linux && cgo

// The dlopen loader and call trampolines of gpu/cuda. See driver_cgo.h.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_cgo.h"
#include "signals_cgo.h"

#define RC_CUDA_ERROR_INVALID_VALUE 1

#define RC_JIT_INFO_LOG_BUFFER 3
#define RC_JIT_INFO_LOG_BUFFER_SIZE_BYTES 4
#define RC_JIT_ERROR_LOG_BUFFER 5
#define RC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define RC_JIT_LOG_VERBOSE 12

typedef struct {
	const char *name;
	size_t offset;
} rc_symbol;

#define RC_SYM(field, sym) {sym, offsetof(rc_cuda_api, field)}

static const rc_symbol rc_symbols[] = {
	RC_SYM(cuInit, "cuInit"),
	RC_SYM(cuDriverGetVersion, "cuDriverGetVersion"),
	RC_SYM(cuDeviceGetCount, "cuDeviceGetCount"),
	RC_SYM(cuDeviceGet, "cuDeviceGet"),
	RC_SYM(cuDeviceGetName, "cuDeviceGetName"),
	RC_SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
	RC_SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
	RC_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	RC_SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	RC_SYM(cuCtxSetCurrent, "cuCtxSetCurrent"),
	RC_SYM(cuCtxSynchronize, "cuCtxSynchronize"),
	RC_SYM(cuModuleLoadDataEx, "cuModuleLoadDataEx"),
	RC_SYM(cuModuleUnload, "cuModuleUnload"),
	RC_SYM(cuModuleGetFunction, "cuModuleGetFunction"),
	RC_SYM(cuLaunchKernel, "cuLaunchKernel"),
	RC_SYM(cuStreamCreate, "cuStreamCreate"),
	RC_SYM(cuStreamDestroy, "cuStreamDestroy_v2"),
	RC_SYM(cuStreamSynchronize, "cuStreamSynchronize"),
	RC_SYM(cuStreamQuery, "cuStreamQuery"),
	RC_SYM(cuEventCreate, "cuEventCreate"),
	RC_SYM(cuEventRecord, "cuEventRecord"),
	RC_SYM(cuEventSynchronize, "cuEventSynchronize"),
	RC_SYM(cuEventElapsedTime, "cuEventElapsedTime"),
	RC_SYM(cuEventDestroy, "cuEventDestroy_v2"),
	RC_SYM(cuMemAlloc, "cuMemAlloc_v2"),
	RC_SYM(cuMemFree, "cuMemFree_v2"),
	RC_SYM(cuMemHostAlloc, "cuMemHostAlloc"),
	RC_SYM(cuMemFreeHost, "cuMemFreeHost"),
	RC_SYM(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"),
	RC_SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
	RC_SYM(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
	RC_SYM(cuMemGetInfo, "cuMemGetInfo_v2"),
	RC_SYM(cuGetErrorName, "cuGetErrorName"),
	RC_SYM(cuGetErrorString, "cuGetErrorString"),
};

#define RC_NSYMBOLS ((int)(sizeof(rc_symbols) / sizeof(rc_symbols[0])))

// Entry points resolved when present (the stream-ordered allocator, CUDA
// 11.2+); a driver without them still loads.
static const rc_symbol rc_optional[] = {
	RC_SYM(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool"),
	RC_SYM(cuMemPoolSetAttribute, "cuMemPoolSetAttribute"),
	RC_SYM(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync"),
	RC_SYM(cuMemFreeAsync, "cuMemFreeAsync"),
	RC_SYM(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
	RC_SYM(cuFuncGetAttribute, "cuFuncGetAttribute"),
	RC_SYM(cuFuncSetAttribute, "cuFuncSetAttribute"),
	RC_SYM(cuCtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange"),
	RC_SYM(cuStreamCreateWithPriority, "cuStreamCreateWithPriority"),
};

#define RC_NOPTIONAL ((int)(sizeof(rc_optional) / sizeof(rc_optional[0])))

#define RC_CUDA_ERROR_NOT_SUPPORTED 801
#define RC_MEMPOOL_ATTR_RELEASE_THRESHOLD 4

int rc_cuda_optional_count(void) { return RC_NOPTIONAL; }

const char *rc_cuda_optional_name(int i) {
	if (i < 0 || i >= RC_NOPTIONAL) {
		return NULL;
	}
	return rc_optional[i].name;
}

int rc_cuda_has_stream_ordered(rc_cuda_api *a) {
	return a->cuDeviceGetDefaultMemPool != NULL && a->cuMemPoolSetAttribute != NULL &&
	       a->cuMemAllocFromPoolAsync != NULL && a->cuMemFreeAsync != NULL;
}

int rc_cuda_symbol_count(void) { return RC_NSYMBOLS; }

const char *rc_cuda_symbol_name(int i) {
	if (i < 0 || i >= RC_NSYMBOLS) {
		return NULL;
	}
	return rc_symbols[i].name;
}

static void rc_copy(char *dst, size_t len, const char *src) {
	if (dst == NULL || len == 0) {
		return;
	}
	snprintf(dst, len, "%s", src != NULL ? src : "");
}

rc_cuda_api *rc_cuda_open(const char *path, int *stage, char *err, size_t errlen, char *libpath, size_t libpathlen) {
	dlerror(); // clear a stale error of this thread
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		rc_copy(err, errlen, e != NULL ? e : "dlopen failed");
		*stage = RC_OPEN_DLOPEN;
		return NULL;
	}
	rc_cuda_api *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		dlclose(h);
		rc_copy(err, errlen, "out of host memory");
		*stage = RC_OPEN_ALLOC;
		return NULL;
	}
	a->handle = h;
	for (int i = 0; i < RC_NSYMBOLS; i++) {
		dlerror();
		void *p = dlsym(h, rc_symbols[i].name);
		if (p == NULL) {
			const char *e = dlerror();
			snprintf(err, errlen, "symbol %s not found: %s", rc_symbols[i].name,
				e != NULL ? e : "NULL");
			free(a);
			dlclose(h);
			*stage = RC_OPEN_DLSYM;
			return NULL;
		}
		memcpy((char *)a + rc_symbols[i].offset, &p, sizeof(p));
	}
	for (int i = 0; i < RC_NOPTIONAL; i++) {
		void *p = dlsym(h, rc_optional[i].name);
		memcpy((char *)a + rc_optional[i].offset, &p, sizeof(p));
	}
	dlerror(); // a missing optional symbol is not an error
	Dl_info info;
	memset(&info, 0, sizeof(info));
	void *probe;
	memcpy(&probe, &a->cuInit, sizeof(probe));
	if (dladdr(probe, &info) != 0 && info.dli_fname != NULL) {
		rc_copy(libpath, libpathlen, info.dli_fname);
	} else {
		rc_copy(libpath, libpathlen, path);
	}
	return a;
}

// rc_cuInit initialises the driver, then adds SA_ONSTACK to any signal
// handler it installed without (signals_cgo.h).
CUresult rc_cuInit(rc_cuda_api *a, unsigned int flags) {
	rc_sigactions saved;
	rc_sig_lock();
	rc_sig_save(&saved);
	CUresult r = a->cuInit(flags);
	rc_sig_repair(&saved);
	rc_sig_unlock();
	return r;
}
CUresult rc_cuDriverGetVersion(rc_cuda_api *a, int *v) { return a->cuDriverGetVersion(v); }
CUresult rc_cuDeviceGetCount(rc_cuda_api *a, int *n) { return a->cuDeviceGetCount(n); }
CUresult rc_cuDeviceGet(rc_cuda_api *a, CUdevice *d, int ordinal) { return a->cuDeviceGet(d, ordinal); }
CUresult rc_cuDeviceGetName(rc_cuda_api *a, char *name, int len, CUdevice d) {
	return a->cuDeviceGetName(name, len, d);
}
CUresult rc_cuDeviceGetAttribute(rc_cuda_api *a, int *v, CUdevice_attribute attr, CUdevice d) {
	return a->cuDeviceGetAttribute(v, attr, d);
}
CUresult rc_cuDeviceTotalMem(rc_cuda_api *a, size_t *bytes, CUdevice d) { return a->cuDeviceTotalMem(bytes, d); }
CUresult rc_cuDevicePrimaryCtxRetain(rc_cuda_api *a, CUcontext *c, CUdevice d) {
	return a->cuDevicePrimaryCtxRetain(c, d);
}
CUresult rc_cuDevicePrimaryCtxRelease(rc_cuda_api *a, CUdevice d) { return a->cuDevicePrimaryCtxRelease(d); }
CUresult rc_cuCtxSetCurrent(rc_cuda_api *a, CUcontext c) { return a->cuCtxSetCurrent(c); }
CUresult rc_cuCtxSynchronize(rc_cuda_api *a) { return a->cuCtxSynchronize(); }

CUresult rc_cuModuleLoadDataEx(rc_cuda_api *a, CUmodule *m, const void *image,
	char *infolog, size_t infolen, char *errlog, size_t errlen, int verbose) {
	CUjit_option opts[5];
	void *vals[5];
	unsigned int n = 0;
	if (infolog != NULL && infolen > 0) {
		opts[n] = RC_JIT_INFO_LOG_BUFFER;
		vals[n++] = infolog;
		opts[n] = RC_JIT_INFO_LOG_BUFFER_SIZE_BYTES;
		vals[n++] = (void *)(uintptr_t)infolen;
	}
	if (errlog != NULL && errlen > 0) {
		opts[n] = RC_JIT_ERROR_LOG_BUFFER;
		vals[n++] = errlog;
		opts[n] = RC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
		vals[n++] = (void *)(uintptr_t)errlen;
	}
	if (verbose) {
		opts[n] = RC_JIT_LOG_VERBOSE;
		vals[n++] = (void *)(uintptr_t)1;
	}
	return a->cuModuleLoadDataEx(m, image, n, opts, vals);
}

CUresult rc_cuModuleUnload(rc_cuda_api *a, CUmodule m) { return a->cuModuleUnload(m); }
CUresult rc_cuModuleGetFunction(rc_cuda_api *a, CUfunction *f, CUmodule m, const char *name) {
	return a->cuModuleGetFunction(f, m, name);
}

CUresult rc_cuLaunchKernel(rc_cuda_api *a, CUfunction f,
	unsigned int gx, unsigned int gy, unsigned int gz,
	unsigned int bx, unsigned int by, unsigned int bz,
	unsigned int shared, CUstream s, unsigned long long *args, int nargs) {
	if (nargs < 0 || nargs > RC_MAX_KERNEL_ARGS) {
		return RC_CUDA_ERROR_INVALID_VALUE;
	}
	// Each parameter is passed by address; the driver reads as many bytes
	// as the kernel's parameter has (4 or 8), which on a little-endian host
	// is the low part of the 8-byte slot. The driver copies the values
	// before cuLaunchKernel returns, so pointing into args is safe.
	void *params[RC_MAX_KERNEL_ARGS + 1];
	for (int i = 0; i < nargs; i++) {
		params[i] = &args[i];
	}
	params[nargs] = NULL;
	return a->cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, nargs > 0 ? params : NULL, NULL);
}

CUresult rc_cuStreamCreate(rc_cuda_api *a, CUstream *s, unsigned int flags) { return a->cuStreamCreate(s, flags); }
CUresult rc_cuStreamDestroy(rc_cuda_api *a, CUstream s) { return a->cuStreamDestroy(s); }
CUresult rc_cuStreamSynchronize(rc_cuda_api *a, CUstream s) { return a->cuStreamSynchronize(s); }
CUresult rc_cuStreamQuery(rc_cuda_api *a, CUstream s) { return a->cuStreamQuery(s); }
CUresult rc_cuEventCreate(rc_cuda_api *a, CUevent *e, unsigned int flags) { return a->cuEventCreate(e, flags); }
CUresult rc_cuEventRecord(rc_cuda_api *a, CUevent e, CUstream s) { return a->cuEventRecord(e, s); }
CUresult rc_cuEventSynchronize(rc_cuda_api *a, CUevent e) { return a->cuEventSynchronize(e); }
CUresult rc_cuEventElapsedTime(rc_cuda_api *a, float *ms, CUevent start, CUevent end) {
	return a->cuEventElapsedTime(ms, start, end);
}
CUresult rc_cuEventDestroy(rc_cuda_api *a, CUevent e) { return a->cuEventDestroy(e); }
CUresult rc_cuMemAlloc(rc_cuda_api *a, CUdeviceptr *p, size_t bytes) { return a->cuMemAlloc(p, bytes); }
CUresult rc_cuMemFree(rc_cuda_api *a, CUdeviceptr p) { return a->cuMemFree(p); }
CUresult rc_cuMemHostAlloc(rc_cuda_api *a, void **p, size_t bytes, unsigned int flags) {
	return a->cuMemHostAlloc(p, bytes, flags);
}
CUresult rc_cuMemFreeHost(rc_cuda_api *a, void *p) { return a->cuMemFreeHost(p); }
CUresult rc_cuMemHostGetDevicePointer(rc_cuda_api *a, CUdeviceptr *d, void *p, unsigned int flags) {
	return a->cuMemHostGetDevicePointer(d, p, flags);
}
CUresult rc_cuMemcpyHtoDAsync(rc_cuda_api *a, CUdeviceptr dst, const void *src, size_t bytes, CUstream s) {
	return a->cuMemcpyHtoDAsync(dst, src, bytes, s);
}
CUresult rc_cuMemcpyDtoHAsync(rc_cuda_api *a, void *dst, CUdeviceptr src, size_t bytes, CUstream s) {
	return a->cuMemcpyDtoHAsync(dst, src, bytes, s);
}
CUresult rc_cuMemGetInfo(rc_cuda_api *a, size_t *free_bytes, size_t *total_bytes) {
	return a->cuMemGetInfo(free_bytes, total_bytes);
}

CUresult rc_cuDeviceGetDefaultMemPool(rc_cuda_api *a, CUmemoryPool *p, CUdevice d) {
	if (a->cuDeviceGetDefaultMemPool == NULL) {
		return RC_CUDA_ERROR_NOT_SUPPORTED;
	}
	return a->cuDeviceGetDefaultMemPool(p, d);
}

CUresult rc_cuMemPoolSetReleaseThreshold(rc_cuda_api *a, CUmemoryPool p, unsigned long long bytes) {
	if (a->cuMemPoolSetAttribute == NULL) {
		return RC_CUDA_ERROR_NOT_SUPPORTED;
	}
	// CU_MEMPOOL_ATTR_RELEASE_THRESHOLD takes a cuuint64_t.
	return a->cuMemPoolSetAttribute(p, RC_MEMPOOL_ATTR_RELEASE_THRESHOLD, &bytes);
}

CUresult rc_cuMemAllocFromPoolAsync(rc_cuda_api *a, CUdeviceptr *d, size_t bytes, CUmemoryPool p, CUstream s) {
	if (a->cuMemAllocFromPoolAsync == NULL) {
		return RC_CUDA_ERROR_NOT_SUPPORTED;
	}
	return a->cuMemAllocFromPoolAsync(d, bytes, p, s);
}

CUresult rc_cuOccupancyMaxActiveBlocksPerMultiprocessor(rc_cuda_api *a, int *n, CUfunction f, int block, size_t smem) {
	if (a->cuOccupancyMaxActiveBlocksPerMultiprocessor == NULL) {
		return RC_CUDA_ERROR_NOT_SUPPORTED;
	}
	return a->cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, smem);
}

CUresult rc_cuFuncGetAttribute(rc_cuda_api *a, int *v, CUfunction_attribute attr, CUfunction f) {
	if (a->cuFuncGetAttribute == NULL) {
		return RC_CUDA_ERROR_NOT_SUPPORTED;
	}
	return a->cuFuncGetAttribute(v, attr, f);
}

CUresult rc_cuFuncSetAttribute(rc_cuda_api *a, CUfunction f, CUfunction_attribute attr, int v) {
	if (a->cuFuncSetAttribute == NULL) {
		return RC_CUDA_ERROR_NOT_SUPPORTED;
	}
	return a->cuFuncSetAttribute(f, attr, v);
}

CUresult rc_cuCtxGetStreamPriorityRange(rc_cuda_api *a, int *least, int *greatest) {
	if (a->cuCtxGetStreamPriorityRange == NULL) {
		return RC_CUDA_ERROR_NOT_SUPPORTED;
	}
	return a->cuCtxGetStreamPriorityRange(least, greatest);
}

CUresult rc_cuStreamCreateWithPriority(rc_cuda_api *a, CUstream *s, unsigned int flags, int priority) {
	if (a->cuStreamCreateWithPriority == NULL) {
		return RC_CUDA_ERROR_NOT_SUPPORTED;
	}
	return a->cuStreamCreateWithPriority(s, flags, priority);
}

CUresult rc_cuMemFreeAsync(rc_cuda_api *a, CUdeviceptr d, CUstream s) {
	if (a->cuMemFreeAsync == NULL) {
		return RC_CUDA_ERROR_NOT_SUPPORTED;
	}
	return a->cuMemFreeAsync(d, s);
}

const char *rc_cuGetErrorName(rc_cuda_api *a, CUresult r) {
	const char *s = NULL;
	if (a->cuGetErrorName(r, &s) != 0) {
		return NULL;
	}
	return s;
}

const char *rc_cuGetErrorString(rc_cuda_api *a, CUresult r) {
	const char *s = NULL;
	if (a->cuGetErrorString(r, &s) != 0) {
		return NULL;
	}
	return s;
}

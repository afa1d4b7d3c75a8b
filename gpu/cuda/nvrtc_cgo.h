// NVRTC types and the function-pointer table of libnvrtc, declared here so
// that no CUDA header is needed to build. Only what gpu/cuda uses.

#ifndef RINGACTOR_CUDA_NVRTC_CGO_H
#define RINGACTOR_CUDA_NVRTC_CGO_H

#include <stddef.h>

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

// rc_nvrtc_api holds the resolved entry points of libnvrtc.
typedef struct rc_nvrtc_api {
	void *handle;
	const char *(*nvrtcGetErrorString)(nvrtcResult);
	nvrtcResult (*nvrtcVersion)(int *, int *);
	nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int,
		const char *const *, const char *const *);
	nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
	nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
	nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t *);
	nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char *);
	nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
	nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
	nvrtcResult (*nvrtcAddNameExpression)(nvrtcProgram, const char *);
	nvrtcResult (*nvrtcGetLoweredName)(nvrtcProgram, const char *, const char **);
	// Optional entry points, NULL when the library lacks them: the CUBIN
	// of a compilation for a real architecture (sm_XY; CUDA 11.1+).
	nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
	nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
} rc_nvrtc_api;

// rc_nvrtc_open dlopens path and resolves every entry point (the optional
// ones to NULL when missing). On success it
// returns a calloc'd table (never freed: the library stays loaded) and
// writes the resolved file name of the library into libpath. On failure it
// returns NULL and writes the reason (dlerror's text, or the missing
// symbol) into err. Runs entirely in C so that dlerror is read on the
// thread that caused it.
rc_nvrtc_api *rc_nvrtc_open(const char *path, char *err, size_t errlen, char *libpath, size_t libpathlen);

// Call trampolines: Go cannot call a C function pointer directly.
// rc_nvrtcGetErrorString returns NULL if the library gives none.
const char *rc_nvrtcGetErrorString(rc_nvrtc_api *a, nvrtcResult r);
nvrtcResult rc_nvrtcVersion(rc_nvrtc_api *a, int *major, int *minor);
nvrtcResult rc_nvrtcCreateProgram(rc_nvrtc_api *a, nvrtcProgram *p, const char *src, const char *name,
	int nheaders, char **headers, char **includeNames);
nvrtcResult rc_nvrtcDestroyProgram(rc_nvrtc_api *a, nvrtcProgram *p);
nvrtcResult rc_nvrtcCompileProgram(rc_nvrtc_api *a, nvrtcProgram p, int nopts, char **opts);
nvrtcResult rc_nvrtcGetPTXSize(rc_nvrtc_api *a, nvrtcProgram p, size_t *n);
nvrtcResult rc_nvrtcGetPTX(rc_nvrtc_api *a, nvrtcProgram p, char *ptx);
nvrtcResult rc_nvrtcGetProgramLogSize(rc_nvrtc_api *a, nvrtcProgram p, size_t *n);
nvrtcResult rc_nvrtcGetProgramLog(rc_nvrtc_api *a, nvrtcProgram p, char *log);
nvrtcResult rc_nvrtcAddNameExpression(rc_nvrtc_api *a, nvrtcProgram p, const char *expr);
nvrtcResult rc_nvrtcGetLoweredName(rc_nvrtc_api *a, nvrtcProgram p, const char *expr, const char **lowered);
// rc_nvrtc_has_cubin reports whether the library has nvrtcGetCUBINSize and
// nvrtcGetCUBIN; the two calls return RC_NVRTC_NO_ENTRY when it has not.
int rc_nvrtc_has_cubin(rc_nvrtc_api *a);
nvrtcResult rc_nvrtcGetCUBINSize(rc_nvrtc_api *a, nvrtcProgram p, size_t *n);
nvrtcResult rc_nvrtcGetCUBIN(rc_nvrtc_api *a, nvrtcProgram p, char *cubin);

// RC_NVRTC_NO_ENTRY is the result of a trampoline whose optional entry
// point the library lacks (NVRTC_ERROR_INTERNAL_ERROR's value).
#define RC_NVRTC_NO_ENTRY 11

#endif

//go:build linux && cgo

// The dlopen loader and call trampolines of NVRTC. See nvrtc_cgo.h.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_cgo.h"
#include "signals_cgo.h"

typedef struct {
	const char *name;
	size_t offset;
} rc_nvrtc_symbol;

#define RC_NVRTC_SYM(field) {#field, offsetof(rc_nvrtc_api, field)}

static const rc_nvrtc_symbol rc_nvrtc_symbols[] = {
	RC_NVRTC_SYM(nvrtcGetErrorString),
	RC_NVRTC_SYM(nvrtcVersion),
	RC_NVRTC_SYM(nvrtcCreateProgram),
	RC_NVRTC_SYM(nvrtcDestroyProgram),
	RC_NVRTC_SYM(nvrtcCompileProgram),
	RC_NVRTC_SYM(nvrtcGetPTXSize),
	RC_NVRTC_SYM(nvrtcGetPTX),
	RC_NVRTC_SYM(nvrtcGetProgramLogSize),
	RC_NVRTC_SYM(nvrtcGetProgramLog),
	RC_NVRTC_SYM(nvrtcAddNameExpression),
	RC_NVRTC_SYM(nvrtcGetLoweredName),
};

#define RC_NVRTC_NSYMBOLS ((int)(sizeof(rc_nvrtc_symbols) / sizeof(rc_nvrtc_symbols[0])))

// Entry points a library may lack: left NULL then.
static const rc_nvrtc_symbol rc_nvrtc_optional[] = {
	RC_NVRTC_SYM(nvrtcGetCUBINSize),
	RC_NVRTC_SYM(nvrtcGetCUBIN),
};

#define RC_NVRTC_NOPTIONAL ((int)(sizeof(rc_nvrtc_optional) / sizeof(rc_nvrtc_optional[0])))

static void rc_nvrtc_copy(char *dst, size_t len, const char *src) {
	if (dst == NULL || len == 0) {
		return;
	}
	snprintf(dst, len, "%s", src != NULL ? src : "");
}

rc_nvrtc_api *rc_nvrtc_open(const char *path, char *err, size_t errlen, char *libpath, size_t libpathlen) {
	dlerror(); // clear a stale error of this thread
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		rc_nvrtc_copy(err, errlen, e != NULL ? e : "dlopen failed");
		return NULL;
	}
	rc_nvrtc_api *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		dlclose(h);
		rc_nvrtc_copy(err, errlen, "out of host memory");
		return NULL;
	}
	a->handle = h;
	for (int i = 0; i < RC_NVRTC_NSYMBOLS; i++) {
		dlerror();
		void *p = dlsym(h, rc_nvrtc_symbols[i].name);
		if (p == NULL) {
			const char *e = dlerror();
			snprintf(err, errlen, "symbol %s not found: %s", rc_nvrtc_symbols[i].name,
				e != NULL ? e : "NULL");
			free(a);
			dlclose(h);
			return NULL;
		}
		memcpy((char *)a + rc_nvrtc_symbols[i].offset, &p, sizeof(p));
	}
	for (int i = 0; i < RC_NVRTC_NOPTIONAL; i++) {
		void *p = dlsym(h, rc_nvrtc_optional[i].name);
		memcpy((char *)a + rc_nvrtc_optional[i].offset, &p, sizeof(p));
	}
	dlerror(); // a missing optional entry is not an error
	Dl_info info;
	memset(&info, 0, sizeof(info));
	void *probe;
	memcpy(&probe, &a->nvrtcVersion, sizeof(probe));
	if (dladdr(probe, &info) != 0 && info.dli_fname != NULL) {
		rc_nvrtc_copy(libpath, libpathlen, info.dli_fname);
	} else {
		rc_nvrtc_copy(libpath, libpathlen, path);
	}
	return a;
}

const char *rc_nvrtcGetErrorString(rc_nvrtc_api *a, nvrtcResult r) { return a->nvrtcGetErrorString(r); }
nvrtcResult rc_nvrtcVersion(rc_nvrtc_api *a, int *major, int *minor) { return a->nvrtcVersion(major, minor); }
nvrtcResult rc_nvrtcCreateProgram(rc_nvrtc_api *a, nvrtcProgram *p, const char *src, const char *name,
	int nheaders, char **headers, char **includeNames) {
	return a->nvrtcCreateProgram(p, src, name, nheaders, (const char *const *)headers,
		(const char *const *)includeNames);
}
nvrtcResult rc_nvrtcDestroyProgram(rc_nvrtc_api *a, nvrtcProgram *p) { return a->nvrtcDestroyProgram(p); }
// rc_nvrtcCompileProgram compiles with NVRTC, which swaps its own SIGINT
// and SIGTERM handlers in and back while it runs (signals_cgo.h): the
// compilations are serialised and Go's handlers mended after each.
nvrtcResult rc_nvrtcCompileProgram(rc_nvrtc_api *a, nvrtcProgram p, int nopts, char **opts) {
	rc_sigactions saved;
	rc_sig_lock();
	rc_sig_save(&saved);
	nvrtcResult r = a->nvrtcCompileProgram(p, nopts, (const char *const *)opts);
	rc_sig_repair(&saved);
	rc_sig_unlock();
	return r;
}
nvrtcResult rc_nvrtcGetPTXSize(rc_nvrtc_api *a, nvrtcProgram p, size_t *n) { return a->nvrtcGetPTXSize(p, n); }
nvrtcResult rc_nvrtcGetPTX(rc_nvrtc_api *a, nvrtcProgram p, char *ptx) { return a->nvrtcGetPTX(p, ptx); }
nvrtcResult rc_nvrtcGetProgramLogSize(rc_nvrtc_api *a, nvrtcProgram p, size_t *n) {
	return a->nvrtcGetProgramLogSize(p, n);
}
nvrtcResult rc_nvrtcGetProgramLog(rc_nvrtc_api *a, nvrtcProgram p, char *log) { return a->nvrtcGetProgramLog(p, log); }
nvrtcResult rc_nvrtcAddNameExpression(rc_nvrtc_api *a, nvrtcProgram p, const char *expr) {
	return a->nvrtcAddNameExpression(p, expr);
}
nvrtcResult rc_nvrtcGetLoweredName(rc_nvrtc_api *a, nvrtcProgram p, const char *expr, const char **lowered) {
	return a->nvrtcGetLoweredName(p, expr, lowered);
}
int rc_nvrtc_has_cubin(rc_nvrtc_api *a) { return a->nvrtcGetCUBINSize != NULL && a->nvrtcGetCUBIN != NULL; }
nvrtcResult rc_nvrtcGetCUBINSize(rc_nvrtc_api *a, nvrtcProgram p, size_t *n) {
	if (a->nvrtcGetCUBINSize == NULL) {
		return RC_NVRTC_NO_ENTRY;
	}
	return a->nvrtcGetCUBINSize(p, n);
}
nvrtcResult rc_nvrtcGetCUBIN(rc_nvrtc_api *a, nvrtcProgram p, char *cubin) {
	if (a->nvrtcGetCUBIN == NULL) {
		return RC_NVRTC_NO_ENTRY;
	}
	return a->nvrtcGetCUBIN(p, cubin);
}

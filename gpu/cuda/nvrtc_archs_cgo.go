//go:build linux && cgo

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include "nvrtc_cgo.h"

// rc_nvrtc_archs fills out (cap entries) with nvrtcGetSupportedArchs and
// returns the count, or -1 when the library has no such entry point
// (before CUDA 11.2), -2 when a call fails, -3 when cap is too small.
static int rc_nvrtc_archs(rc_nvrtc_api *a, int *out, int cap) {
	nvrtcResult (*num)(int *) = (nvrtcResult (*)(int *))dlsym(a->handle, "nvrtcGetNumSupportedArchs");
	nvrtcResult (*get)(int *) = (nvrtcResult (*)(int *))dlsym(a->handle, "nvrtcGetSupportedArchs");
	if (num == NULL || get == NULL) {
		return -1;
	}
	int n = 0;
	if (num(&n) != 0 || n < 0) {
		return -2;
	}
	if (n > cap) {
		return -3;
	}
	if (n > 0 && get(out) != 0) {
		return -2;
	}
	return n;
}
*/
import "C"

// supportedArchs asks the library for the SM versions it compiles for; nil
// when it cannot say.
func (l *nvrtcLib) supportedArchs() []int {
	var buf [256]C.int
	n := int(C.rc_nvrtc_archs(l.api, &buf[0], C.int(len(buf))))
	if n <= 0 {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = int(buf[i])
	}
	return out
}

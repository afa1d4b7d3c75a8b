//go:build linux && cgo

package cuda

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "nvrtc_cgo.h"
*/
import "C"

import (
	"sort"
	"unsafe"
)

// nvrtcLib is a loaded NVRTC library: the resolved entry points.
type nvrtcLib struct {
	api  *C.rc_nvrtc_api
	path string
}

// openNVRTC dlopens path and resolves the entry points. On failure it
// returns the reason (dlerror's text or the missing symbol).
func openNVRTC(path string) (*nvrtcLib, string) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var errbuf, libbuf [1024]C.char
	api := C.rc_nvrtc_open(cpath, &errbuf[0], C.size_t(len(errbuf)), &libbuf[0], C.size_t(len(libbuf)))
	if api == nil {
		return nil, C.GoString(&errbuf[0])
	}
	return &nvrtcLib{api: api, path: C.GoString(&libbuf[0])}, ""
}

func (l *nvrtcLib) check(call string, r C.nvrtcResult) error {
	if r == 0 {
		return nil
	}
	e := &NVRTCError{Call: call, Code: int(r)}
	if s := C.rc_nvrtcGetErrorString(l.api, r); s != nil {
		e.Message = C.GoString(s)
	}
	return e
}

// version calls nvrtcVersion.
func (l *nvrtcLib) version() (major, minor int, err error) {
	var ma, mi C.int
	err = l.check("nvrtcVersion", C.rc_nvrtcVersion(l.api, &ma, &mi))
	return int(ma), int(mi), err
}

// cStrings copies ss into C memory: an array of C strings and a function
// that frees it all.
func cStrings(ss []string) (**C.char, func()) {
	if len(ss) == 0 {
		return nil, func() {}
	}
	arr := (*[1 << 20]*C.char)(C.malloc(C.size_t(len(ss)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))[:len(ss):len(ss)]
	for i, s := range ss {
		arr[i] = C.CString(s)
	}
	return &arr[0], func() {
		for _, p := range arr {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
}

// hasCUBIN reports whether the library has nvrtcGetCUBINSize and
// nvrtcGetCUBIN (CUDA 11.1+).
func (l *nvrtcLib) hasCUBIN() bool { return C.rc_nvrtc_has_cubin(l.api) != 0 }

// nvrtcOutput is what one nvrtcCompileProgram gives back.
type nvrtcOutput struct {
	ptx     []byte
	cubin   []byte
	log     string
	lowered map[string]string
}

// compile runs one NVRTC program from creation to destruction: the source
// with its headers, the name expressions, the options. With cubin (a
// compilation for a real architecture, sm_XY) it fetches the CUBIN, and
// the PTX only when NVRTC keeps one; else the PTX. The log is returned
// whether or not compilation succeeded; err is the first failing call's
// *NVRTCError.
func (l *nvrtcLib) compile(name, code string, headers map[string]string, opts, exprs []string, cubin bool) (out nvrtcOutput, err error) {
	includeNames := make([]string, 0, len(headers))
	for k := range headers {
		includeNames = append(includeNames, k)
	}
	sort.Strings(includeNames)
	contents := make([]string, len(includeNames))
	for i, k := range includeNames {
		contents[i] = headers[k]
	}
	csrc, cname := C.CString(code), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	chdr, freeHdr := cStrings(contents)
	defer freeHdr()
	cinc, freeInc := cStrings(includeNames)
	defer freeInc()
	copts, freeOpts := cStrings(opts)
	defer freeOpts()
	cexprs, freeExprs := cStrings(exprs)
	defer freeExprs()
	exprArr := unsafe.Slice(cexprs, len(exprs))

	var prog C.nvrtcProgram
	if err := l.check("nvrtcCreateProgram", C.rc_nvrtcCreateProgram(l.api, &prog, csrc, cname,
		C.int(len(headers)), chdr, cinc)); err != nil {
		return out, err
	}
	defer C.rc_nvrtcDestroyProgram(l.api, &prog)
	for _, e := range exprArr {
		if err := l.check("nvrtcAddNameExpression", C.rc_nvrtcAddNameExpression(l.api, prog, e)); err != nil {
			return out, err
		}
	}
	compileErr := l.check("nvrtcCompileProgram", C.rc_nvrtcCompileProgram(l.api, prog, C.int(len(opts)), copts))
	var n C.size_t
	if err := l.check("nvrtcGetProgramLogSize", C.rc_nvrtcGetProgramLogSize(l.api, prog, &n)); err != nil {
		return out, err
	}
	if n > 1 {
		buf := make([]byte, int(n))
		if err := l.check("nvrtcGetProgramLog", C.rc_nvrtcGetProgramLog(l.api, prog, (*C.char)(unsafe.Pointer(&buf[0])))); err != nil {
			return out, err
		}
		out.log = string(trimNUL(buf))
	}
	if compileErr != nil {
		return out, compileErr
	}
	if cubin {
		if err := l.check("nvrtcGetCUBINSize", C.rc_nvrtcGetCUBINSize(l.api, prog, &n)); err != nil {
			return out, err
		}
		if n == 0 {
			return out, &NVRTCError{Call: "nvrtcGetCUBINSize", Code: nvrtcErrorInternal, Message: "no CUBIN (not a real architecture?)"}
		}
		img := make([]byte, int(n))
		if err := l.check("nvrtcGetCUBIN", C.rc_nvrtcGetCUBIN(l.api, prog, (*C.char)(unsafe.Pointer(&img[0])))); err != nil {
			return out, err
		}
		out.cubin = img
	}
	ptxErr := l.check("nvrtcGetPTXSize", C.rc_nvrtcGetPTXSize(l.api, prog, &n))
	if ptxErr == nil && n > 1 {
		ptx := make([]byte, int(n)+1)
		if ptxErr = l.check("nvrtcGetPTX", C.rc_nvrtcGetPTX(l.api, prog, (*C.char)(unsafe.Pointer(&ptx[0])))); ptxErr == nil {
			out.ptx = trimNUL(ptx)
		}
	}
	if ptxErr != nil && !cubin {
		return out, ptxErr
	}
	if len(exprs) > 0 {
		out.lowered = make(map[string]string, len(exprs))
		for i, e := range exprArr {
			var s *C.char
			if err := l.check("nvrtcGetLoweredName", C.rc_nvrtcGetLoweredName(l.api, prog, e, &s)); err != nil {
				return out, err
			}
			out.lowered[exprs[i]] = C.GoString(s)
		}
	}
	return out, nil
}

// trimNUL cuts b at its first NUL byte.
func trimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

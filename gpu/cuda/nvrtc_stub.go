//go:build !linux || !cgo

package cuda

// nvrtcLib is a loaded NVRTC library. This build has no cgo layer (it
// needs linux and cgo), so none is ever loaded.
type nvrtcLib struct{ path string }

func openNVRTC(path string) (*nvrtcLib, string) { return nil, errNoCgo + "; not loading " + path }

func (l *nvrtcLib) version() (major, minor int, err error) {
	return 0, 0, &NVRTCError{Call: "nvrtcVersion", Code: nvrtcErrorInternal, Message: errNoCgo}
}

func (l *nvrtcLib) hasCUBIN() bool { return false }

// nvrtcOutput is what one nvrtcCompileProgram gives back.
type nvrtcOutput struct {
	ptx     []byte
	cubin   []byte
	log     string
	lowered map[string]string
}

func (l *nvrtcLib) compile(name, code string, headers map[string]string, opts, exprs []string, cubin bool) (nvrtcOutput, error) {
	return nvrtcOutput{}, &NVRTCError{Call: "nvrtcCreateProgram", Code: nvrtcErrorInternal, Message: errNoCgo}
}

func (l *nvrtcLib) supportedArchs() []int { return nil }

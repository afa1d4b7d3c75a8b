package ringrt_test

import (
	"context"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/internal/ringrt"
)

// NVRTC, as gpu/cuda compiles ring programs, for this package's internal
// tests (hooks_test.go), which cannot import gpu/cuda themselves.
func init() {
	ringrt.CompileForTest = func(ctx context.Context, name, code string, target cuda.NVRTCTarget) ([]byte, error) {
		c, err := cuda.Compile(ctx, cuda.Source{Name: name, Code: code, Arch: target.Arch, Options: cuda.RingProgramOptions})
		if err != nil {
			return nil, err
		}
		if target.Image == cuda.ImageCUBIN {
			return c.CUBIN, nil
		}
		return c.PTX, nil
	}
}

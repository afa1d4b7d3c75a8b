//go:build linux && cgo

package cuda

import (
	"context"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

var _ hostProgramLoader = (*fakeDevice)(nil)

// loadHostProgram builds src's host source (cached by hash, once per
// process) and returns a function whose launches run it on the simulated
// device.
func (f *fakeDevice) loadHostProgram(ctx context.Context, src *RingProgramSource) (Function, error) {
	p, err := hostsim.BuildProgram(ctx, src.Name, src.Host)
	if err != nil {
		return Function{}, err
	}
	return Function{unsafe.Pointer(&fakeFunc{name: p.Entry(), prog: p})}, nil
}

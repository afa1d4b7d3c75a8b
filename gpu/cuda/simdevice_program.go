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
// device. Building runs on the host compiler; attaching the program is the
// simulated module load (attachHostProgram), which the hazard model treats
// as cuModuleLoadDataEx.
func (f *fakeDevice) loadHostProgram(ctx context.Context, src *RingProgramSource) (Function, error) {
	p, err := hostsim.BuildProgram(ctx, src.Name, src.Host)
	if err != nil {
		return Function{}, err
	}
	return Function{unsafe.Pointer(&fakeFunc{name: p.Entry(), prog: p})}, nil
}

// attachHostProgram is the module load of a built program (inside Do, in a
// device epoch when rings run): a synchronising call in the hazard model,
// after which the program's entry counts as a persistent kernel whose
// control block is its first parameter.
func (f *fakeDevice) attachHostProgram(fn Function) error {
	if err := f.hz.Call("cuModuleLoadDataEx"); err != nil {
		return err
	}
	f.hz.MarkPersistent((*fakeFunc)(fn.p).name, 0)
	return nil
}

// programCache is Backend.RingProgramCache on the simulated device: where
// the host build of src is cached and whether it is built.
func (f *fakeDevice) programCache(src *RingProgramSource) (string, bool) {
	return hostsim.CachedProgram(src.Host)
}

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
	ff := (*fakeFunc)(fn.p)
	f.hz.MarkPersistent(ff.name, 0)
	if ff.prog.GridEntry() != "" {
		f.hz.MarkPersistent(ff.prog.GridEntry(), 0) // the grid's own control block
	}
	return nil
}

// programCache is Backend.RingProgramCache on the simulated device: where
// the host build of src is cached and whether it is built.
func (f *fakeDevice) programCache(src *RingProgramSource) (string, bool) {
	return hostsim.CachedProgram(src.Host)
}

// hostGrid returns the function of the persistent grid of a program
// loadHostProgram built (an error when its library has none).
func (f *fakeDevice) hostGrid(fn Function) (Function, error) {
	p := (*fakeFunc)(fn.p).prog
	if p == nil || p.GridEntry() == "" {
		return Function{}, fakeErr("cuModuleGetFunction", ErrNotFound, "CUDA_ERROR_NOT_FOUND", "the program has no grid entry")
	}
	return Function{unsafe.Pointer(&fakeFunc{name: p.GridEntry(), prog: p, grid: true})}, nil
}

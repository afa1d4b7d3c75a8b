//go:build linux && cgo

package simdevice

import (
	"context"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// LoadHostProgram builds src's host source (cached by hash, once per
// process) and returns a function whose launches run it on the simulated
// device. Building runs on the host compiler; attaching the program is the
// simulated module load (AttachHostProgram), which the hazard model treats
// as cuModuleLoadDataEx.
func (f *Device) LoadHostProgram(ctx context.Context, src *cuda.RingProgramSource) (cuda.Function, error) {
	p, err := hostsim.BuildProgram(ctx, src.Name, src.Host)
	if err != nil {
		return cuda.Function{}, err
	}
	return cuda.FunctionFromRaw(unsafe.Pointer(&fakeFunc{name: p.Entry(), prog: p})), nil
}

// AttachHostProgram is the module load of a built program (inside Do, in a
// device epoch when rings run): a synchronising call in the hazard model,
// after which the program's entry counts as a persistent kernel whose
// control block is its first parameter.
func (f *Device) AttachHostProgram(fn cuda.Function) error {
	if err := f.hz.Call("cuModuleLoadDataEx"); err != nil {
		return err
	}
	ff := (*fakeFunc)(fn.Raw())
	f.hz.MarkPersistent(ff.name, 0)
	if ff.prog.GridEntry() != "" {
		f.hz.MarkPersistent(ff.prog.GridEntry(), 0) // the grid's own control block
	}
	return nil
}

// ProgramCache is cuda.Backend.RingProgramCache on the simulated device: where
// the host build of src is cached and whether it is built.
func (f *Device) ProgramCache(src *cuda.RingProgramSource) (string, bool) {
	return hostsim.CachedProgram(src.Host)
}

// HostGrid returns the function of the persistent grid of a program
// LoadHostProgram built (an error when its library has none).
func (f *Device) HostGrid(fn cuda.Function) (cuda.Function, error) {
	p := (*fakeFunc)(fn.Raw()).prog
	if p == nil || p.GridEntry() == "" {
		return cuda.Function{}, fakeErr("cuModuleGetFunction", cuda.ErrNotFound, "CUDA_ERROR_NOT_FOUND", "the program has no grid entry")
	}
	return cuda.FunctionFromRaw(unsafe.Pointer(&fakeFunc{name: p.GridEntry(), prog: p, grid: true})), nil
}

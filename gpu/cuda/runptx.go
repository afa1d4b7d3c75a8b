package cuda

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
)

// RunPTX loads ptx (once per image: modules are cached by the image's
// SHA-256 for the backend's lifetime) in the backend's context and runs
// its kernel entry over in and out with scalars, with the calling
// convention of run-time registered source kernels:
//
//	entry(const T0 *in0, …, const Tk *ink, Tout *out, double s0, …, double sm, unsigned long long n)
//
// the input device pointers in order, the output device pointer, each
// scalar as a double, then n = out.Len(). The launch is 1-D over the
// output: blocks of 256 threads (fewer if the device allows fewer) and
// ceil(n/256) blocks, so the kernel handles index blockIdx.x*blockDim.x +
// threadIdx.x when it is below n. The buffers are moved to device memory
// first; out is left there, marked device-dirty.
//
// A PTX image the driver will not load is a *gpu.CompilationError wrapping
// a *ModuleLoadError with the JIT's log; an unknown entry is a
// *gpu.DeviceError wrapping CUDA_ERROR_NOT_FOUND.
func (b *Backend) RunPTX(ctx context.Context, ptx []byte, entry string, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, scalars []float64) error {
	d, err := b.device()
	if err != nil {
		return err
	}
	bad := func(arg, format string, a ...any) error {
		return &gpu.ArgumentError{Kernel: entry, Arg: arg, Reason: fmt.Sprintf(format, a...), Err: gpu.ErrArgument}
	}
	switch {
	case len(ptx) == 0:
		return bad("ptx", "empty image")
	case entry == "":
		return bad("entry", "empty entry name")
	case out == nil:
		return bad("output", "nil output")
	case len(in)+len(scalars)+2 > MaxKernelArgs:
		return bad("inputs", "%d inputs and %d scalars exceed %d kernel parameters", len(in), len(scalars), MaxKernelArgs)
	}
	for i, buf := range in {
		if buf == nil {
			return bad("inputs", "nil input %d", i)
		}
	}
	n := uint64(out.Len())
	block := d.Attrs.Block1D()
	grid := (n + uint64(block) - 1) / uint64(block)
	if grid > uint64(d.Attrs.MaxGridX) || grid > math.MaxUint32 {
		return bad("output", "%d elements need %d blocks, more than the device's %d", n, grid, d.Attrs.MaxGridX)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	key := sha256.Sum256(ptx)
	err = d.Do(func() error {
		m, err := d.loadPTX(key, ptx, entry)
		if err != nil {
			return err
		}
		f, ok := m.Fns[entry]
		if !ok {
			if f, err = d.API.ModuleGetFunction(m.Mod, entry); err != nil {
				return fmt.Errorf("cuda: entry %q of ptx sha256:%s: %w", entry, hex.EncodeToString(key[:8]), err)
			}
			m.Fns[entry] = f
		}
		return d.InBatch(func() error {
			args := make([]uint64, 0, len(in)+len(scalars)+2)
			for _, buf := range in {
				p, err := d.devicePtr(ctx, buf)
				if err != nil {
					return err
				}
				args = append(args, ArgPtr(p))
			}
			p, err := d.devicePtr(ctx, out)
			if err != nil {
				return err
			}
			args = append(args, ArgPtr(p))
			for _, s := range scalars {
				args = append(args, ArgF64(s))
			}
			args = append(args, ArgU64(n))
			return d.launchOneShot(f, Dim3{X: uint32(grid)}, Dim3{X: block}, 0, d.Stream, args...)
		})
	})
	if err != nil {
		return deviceErr(d.Ordinal, err)
	}
	out.MarkDeviceDirty()
	return nil
}

// loadPTX returns the cached module of key, loading it on a miss (inside
// Do). cuModuleLoadDataEx synchronises the device, so a load while ring
// kernels run is made in a device epoch (epoch.go). A load failure is not
// cached: the same image is retried next time.
func (d *device) loadPTX(key [32]byte, ptx []byte, entry string) (*devcore.LoadedModule, error) {
	if m, ok := d.Modules[key]; ok {
		return m, nil
	}
	var mod Module
	var log JITLog
	err := d.Epoch(context.Background(), "cuModuleLoadDataEx", func() error {
		var err error
		mod, log, err = d.API.ModuleLoadData(ptx, false)
		return err
	})
	if err != nil {
		return nil, &gpu.CompilationError{Kernel: entry, Log: log.Error,
			Err: &ModuleLoadError{Image: "ptx sha256:" + hex.EncodeToString(key[:]), Log: log, Err: err}}
	}
	m := &devcore.LoadedModule{Mod: mod, Log: log, Fns: map[string]Function{}}
	d.Modules[key] = m
	return m, nil
}

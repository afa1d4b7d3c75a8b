package cuda

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ringactor/ringactor/gpu"
)

// LoadPTX loads ptx into the backend's context now (modules are cached by
// the image's SHA-256, as RunPTX caches them) and resolves entries. Module
// loading synchronises the device, which beside a persistent ring kernel
// would wait forever, so a load while ring kernels run is made in a device
// epoch (the rings are parked and relaunched; see [Backend.EpochStats]).
// Loading what a program will run before its rings start avoids even that;
// [SourceKernel] loads its module at registration. Errors are those of
// RunPTX's loading: *gpu.CompilationError with a *ModuleLoadError for an
// image the driver refuses, *DriverError CUDA_ERROR_NOT_FOUND for an entry
// the image lacks.
func (b *Backend) LoadPTX(ctx context.Context, ptx []byte, entries ...string) error {
	d, err := b.device()
	if err != nil {
		return err
	}
	if len(ptx) == 0 {
		return &gpu.ArgumentError{Arg: "ptx", Reason: "empty image", Err: gpu.ErrArgument}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	key := sha256.Sum256(ptx)
	return deviceErr(d.Ordinal, d.Do(func() error {
		name := ""
		if len(entries) > 0 {
			name = entries[0]
		}
		m, err := d.loadPTX(key, ptx, name)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if _, ok := m.Fns[e]; ok {
				continue
			}
			f, err := d.API.ModuleGetFunction(m.Mod, e)
			if err != nil {
				return fmt.Errorf("cuda: entry %q of ptx sha256:%s: %w", e, hex.EncodeToString(key[:8]), err)
			}
			m.Fns[e] = f
		}
		return nil
	}))
}

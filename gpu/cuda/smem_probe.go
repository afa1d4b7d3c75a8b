package cuda

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/ringactor/ringactor/gpu"
)

// The dynamic shared memory probe: rc_smem_probe of kernels/oneshot.cu, a
// one-shot kernel that opts in to more than 48 KiB of dynamic shared
// memory, launched on the one-shot stream.

const (
	// smemProbeEntry is the probe's kernel.
	smemProbeEntry = "rc_smem_probe"
	// smemProbeThreads is its block size: a power of two, so it needs at
	// least 4 × smemProbeThreads bytes (a word a thread).
	smemProbeThreads = 256
	// SharedMemoryProbeMin is the least shared memory SharedMemoryProbe
	// takes: a 32-bit word for each of its 256 threads a block.
	SharedMemoryProbeMin = 4 * smemProbeThreads
)

// smemProbeSum is what block b of rc_smem_probe writes over words words:
// the sum of rc_smem_word(b, i), modulo 2^32.
func smemProbeSum(b, words uint32) uint32 {
	var sum uint32
	for i := range words {
		sum += ((i + 1) * 2654435761) ^ (b*0x9E3779B9 + 0x7F4A7C15)
	}
	return sum
}

// SharedMemoryProbe runs a one-shot kernel with bytes of dynamic shared
// memory per block, one block per SM, on the backend's one-shot stream,
// and checks that every block stored its whole shared memory and read it
// back. Above 48 KiB ([DefaultMaxDynamicShared]) it first raises the
// kernel's FuncAttrMaxDynamicSharedSizeBytes to bytes, as every kernel
// that opts in to more must. Beside running ring kernels it shows that the
// SMs holding persistent blocks still give a one-shot kernel that much
// shared memory (`ringactor selftest --device`'s scale step runs it with
// ~100 KiB; docs/device.md, "Priorities and shared memory beside persistent kernels"). It makes no
// synchronising driver call.
//
// bytes must be a multiple of 4 of at least [SharedMemoryProbeMin]
// (else a *gpu.ArgumentError matching gpu.ErrArgument); more than the
// profile's SharedMemPerBlockOptin is a *gpu.DeviceError of kind
// gpu.DeviceCapacity (gpu.ErrDeviceCapacity). A block whose memory did
// not hold is a *gpu.DeviceError of kind gpu.DeviceFailed; a launch the
// device refuses is the driver's error in a *gpu.DeviceError.
func (b *Backend) SharedMemoryProbe(ctx context.Context, bytes int) error {
	d, err := b.device()
	if err != nil {
		return err
	}
	if bytes < SharedMemoryProbeMin || bytes%4 != 0 {
		return &gpu.ArgumentError{Kernel: smemProbeEntry, Arg: "bytes",
			Reason: fmt.Sprintf("%d bytes of shared memory: want a multiple of 4 of at least %d", bytes, SharedMemoryProbeMin),
			Err:    gpu.ErrArgument}
	}
	if optin := d.profile.SharedMemPerBlockOptin; optin > 0 && bytes > optin {
		return &gpu.DeviceError{Kind: gpu.DeviceCapacity, Backend: BackendName, Device: d.Ordinal,
			Reason: fmt.Sprintf("%d bytes of shared memory per block: the device gives a block at most %d", bytes, optin)}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	blocks := uint32(max(1, d.Attrs.SMs))
	words := uint32(bytes / 4)
	res := make([]byte, 4*blocks)
	err = d.Do(func() error {
		f, ok := d.fns[smemProbeEntry]
		if !ok {
			return fmt.Errorf("cuda: one-shot entry %s is not loaded: %w", smemProbeEntry, gpu.ErrDevice)
		}
		if bytes > DefaultMaxDynamicShared {
			fa, ok := d.API.(FuncAttributeAPI)
			if !ok {
				return &gpu.DeviceError{Kind: gpu.DeviceCapacity, Backend: BackendName, Device: d.Ordinal,
					Reason: fmt.Sprintf("%d bytes of shared memory per block: the driver cannot raise a kernel's above %d", bytes, DefaultMaxDynamicShared)}
			}
			if err := fa.FuncSetAttribute(f, FuncAttrMaxDynamicSharedSizeBytes, bytes); err != nil {
				return fmt.Errorf("cuda: raising %s's dynamic shared memory to %d bytes: %w", smemProbeEntry, bytes, err)
			}
		}
		return d.InBatch(func() error {
			out, err := d.Scratch(uint64(len(res)))
			if err != nil {
				return err
			}
			if err := d.launchOneShot(f, Dim3{X: blocks}, Dim3{X: smemProbeThreads}, uint32(bytes), d.Stream,
				ArgPtr(out), ArgU32(words)); err != nil {
				return err
			}
			return d.CopyOut(res, out)
		})
	})
	if err != nil {
		return deviceErr(d.Ordinal, err)
	}
	for blk := range blocks {
		got, want := binary.LittleEndian.Uint32(res[4*blk:]), smemProbeSum(blk, words)
		if got != want {
			return &gpu.DeviceError{Kind: gpu.DeviceFailed, Backend: BackendName, Device: d.Ordinal,
				Reason: fmt.Sprintf("%s block %d of %d: %d bytes of shared memory summed to %#x, want %#x",
					smemProbeEntry, blk, blocks, bytes, got, want)}
		}
	}
	return nil
}

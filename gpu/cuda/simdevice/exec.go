//go:build linux && cgo

package simdevice

import "github.com/ringactor/ringactor/gpu/cuda"

// A ring program's launch keeps its real shape for the hazard model's
// residency (the blocks and threads a GPU would make resident, counted
// with the device profile's limits) but runs on far fewer host threads:
// at most ExecBlocks of its blocks, each with at most ExecThreads
// threads, every thread a host thread. The kernels see the shape they
// run (gridDim, blockDim), so block-wide loops that stride by blockDim
// cover their work, and a grid's blocks take mailboxes from its doorbell
// whatever their number.

// Default execution caps of a ring program's launch.
const (
	DefaultExecBlocks  = 2
	DefaultExecThreads = 4
)

// SetExecShape sets how many blocks of a ring program's launch, and
// threads of each block, the device runs (at least 1 each; defaults
// DefaultExecBlocks and DefaultExecThreads). Set it before the launches
// it is for.
func (f *Device) SetExecShape(blocks, threads int) {
	f.mu.Lock()
	f.execBlocks, f.execThreads = max(1, blocks), max(1, threads)
	f.mu.Unlock()
}

// execShape is what the device runs of a ring program's launch of grid
// blocks of block threads.
func (f *Device) execShape(grid, block cuda.Dim3) (cuda.Dim3, cuda.Dim3) {
	f.mu.Lock()
	eb, et := f.execBlocks, f.execThreads
	f.mu.Unlock()
	if eb <= 0 {
		eb = DefaultExecBlocks
	}
	if et <= 0 {
		et = DefaultExecThreads
	}
	grid.X = min(grid.X, uint32(eb))
	block.X = min(block.X, uint32(et))
	return grid, block
}

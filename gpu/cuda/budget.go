package cuda

import (
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
)

// DeviceReserve is what a device's budget keeps free on every SM for
// one-shot kernels whatever the persistent ring grids take: resident
// blocks, threads, registers and shared memory per SM (shared memory
// counting the driver's per-block reservation), and resident grids on
// the device. See docs/device.md, "The budget".
type DeviceReserve = devcore.Reserve

// DefaultDeviceReserve is the reserve unless [WithDeviceReserve] sets
// another: 8 grids, and per SM 2 blocks, 1,024 threads, 32 K registers
// and 101 KiB of shared memory.
var DefaultDeviceReserve = devcore.DefaultReserve

// BudgetStats is what a device's budget holds: its persistent launches,
// the fullest SM's use of each resource and what persistent launches may
// take of an SM, and how many launches it refused.
type BudgetStats = devcore.BudgetStats

// BudgetClaim is one persistent launch of [BudgetStats].
type BudgetClaim = devcore.ClaimStat

// BudgetShape is a launch's shape as the budget counts it: blocks,
// threads per block, registers per thread, shared memory per block.
type BudgetShape = devcore.Shape

// BudgetError says which limit of the budget refused a launch: a ring
// program's grid or a ring that does not fit beside the persistent
// launches, or a one-shot kernel whose block could not become resident
// beside them. It matches [ErrBudget] and comes wrapped in a
// *gpu.DeviceError of kind gpu.DeviceCapacity.
type BudgetError = devcore.BudgetError

// ErrBudget is matched by a [BudgetError].
var ErrBudget = devcore.ErrBudget

// WithDeviceReserve sets what the device's budget keeps free for
// one-shot kernels on every SM (default [DefaultDeviceReserve]). A larger
// reserve leaves room for larger one-shot blocks and fewer persistent
// grids; a zero figure reserves nothing of that resource.
func WithDeviceReserve(r DeviceReserve) BackendOption {
	return func(b *Backend) { b.reserve, b.reserveSet = r, true }
}

// WithGridBlocks sets the block count of every ring program grid (default
// 0: one block per SM, fewer when the budget has less room). A grid that
// does not fit with n blocks is refused.
func WithGridBlocks(n int) BackendOption {
	return func(b *Backend) {
		if n > 0 {
			b.gridBlocks = n
		}
	}
}

// DeviceBudget returns what the device's budget holds now (opening the
// device on first use), or why there is no device.
func (b *Backend) DeviceBudget() (BudgetStats, error) {
	d, err := b.device()
	if err != nil {
		return BudgetStats{}, err
	}
	return d.Budget.Stats(), nil
}

// budgetLimits are the numbers of p the budget holds launches against.
func (p DeviceProfile) budgetLimits() devcore.BudgetLimits {
	return devcore.BudgetLimits{SMs: p.SMs, ResidentGrids: p.MaxResidentGrids, BlocksPerSM: p.MaxBlocksPerSM,
		ThreadsPerSM: p.MaxThreadsPerSM, RegistersPerSM: p.RegistersPerSM, SharedMemPerSM: p.SharedMemPerSM,
		SharedMemReservedPerBlock: p.SharedMemReservedPerBlock}
}

// launchOneShot launches the one-shot kernel f on s once a block of it
// is known to become resident beside the persistent launches the budget
// holds: on a GPU a block that cannot would wait for them forever. A
// block that does not fit is a *gpu.DeviceError (gpu.DeviceCapacity)
// wrapping the *BudgetError, before any driver call.
func (d *device) launchOneShot(f Function, grid, block Dim3, smem uint32, s Stream, args ...uint64) error {
	if d.Budget != nil && d.Budget.Holds() {
		regs, static := d.FuncResources(f)
		b := block.Norm()
		shape := devcore.Shape{Blocks: int(grid.Norm().X * grid.Norm().Y * grid.Norm().Z), Threads: int(b.X * b.Y * b.Z),
			Registers: regs, SharedMem: int(smem) + static}
		if err := d.Budget.CheckOneShot("a one-shot kernel", shape); err != nil {
			return &gpu.DeviceError{Kind: gpu.DeviceCapacity, Backend: BackendName, Device: d.Ordinal,
				Reason: "its block cannot become resident beside the persistent ring grids", Err: err}
		}
	}
	return d.API.LaunchKernel(f, grid, block, smem, s, args...)
}

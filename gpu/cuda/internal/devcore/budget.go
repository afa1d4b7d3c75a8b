package devcore

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// FuncResources returns the registers per thread and the static shared
// memory of fn (cuFuncGetAttribute NUM_REGS and SHARED_SIZE_BYTES), or
// zeros when the driver does not say (the budget then counts the most a
// block may use). Asked once per function (inside Do): the answers are
// kept.
func (d *Device) FuncResources(fn driverapi.Function) (regs, static int) {
	if r, ok := d.funcRes[fn]; ok {
		return r[0], r[1]
	}
	regs, static = funcResources(d.API, fn)
	if d.funcRes == nil {
		d.funcRes = map[driverapi.Function][2]int{}
	}
	d.funcRes[fn] = [2]int{regs, static}
	return regs, static
}

// funcResources asks the driver for fn's registers and static shared
// memory.
func funcResources(api driverapi.DeviceAPI, fn driverapi.Function) (regs, static int) {
	fa, ok := api.(driverapi.FuncAttributeAPI)
	if !ok || fn.IsNil() {
		return 0, 0
	}
	if n, err := fa.FuncGetAttribute(fn, driverapi.FuncAttrNumRegs); err == nil && n > 0 {
		regs = n
	}
	if n, err := fa.FuncGetAttribute(fn, driverapi.FuncAttrSharedSizeBytes); err == nil && n > 0 {
		static = n
	}
	return regs, static
}

// BudgetLimits are the residency limits of one device the Budget holds
// persistent launches against: its SMs and, per SM, resident blocks,
// threads, registers and shared memory. A zero figure is not counted.
type BudgetLimits struct {
	SMs                       int // multiprocessors
	ResidentGrids             int // grids resident on the device at once (128 from CC 7.5)
	BlocksPerSM               int // resident blocks per SM (32 on an H100 or H200)
	ThreadsPerSM              int // resident threads per SM (2,048)
	RegistersPerSM            int // 32-bit registers per SM (64 K)
	SharedMemPerSM            int // bytes of shared memory per SM (228 KiB)
	SharedMemReservedPerBlock int // bytes the driver reserves per resident block (1 KiB from CC 8.0)
}

// Reserve is what the Budget keeps free on every SM for one-shot kernels
// (Execute) whatever the persistent launches take: blocks, threads,
// registers and shared memory per SM (shared memory counts the
// per-block reservation), and resident grids on the device.
type Reserve struct {
	Grids     int // resident grids left to one-shot kernels and epoch relaunches
	Blocks    int // resident blocks per SM
	Threads   int // threads per SM
	Registers int // registers per SM
	SharedMem int // bytes of shared memory per SM
}

// DefaultReserve is the reserve of a device unless its backend sets
// another: 8 grids, and per SM 2 blocks, 1,024 threads, 32 K registers
// and 101 KiB of shared memory: a one-shot block of up to 1,024 threads
// at 32 registers, or one with 100 KiB of dynamic shared memory, always
// becomes resident beside the persistent grids.
var DefaultReserve = Reserve{Grids: 8, Blocks: 2, Threads: 1024, Registers: 32 << 10, SharedMem: 101 << 10}

// Shape is a launch as the Budget counts it.
type Shape struct {
	Blocks    int // blocks of the grid
	Threads   int // threads per block (resident in whole warps of 32)
	Registers int // registers per thread (0: unknown: the most a block of Threads may use)
	SharedMem int // bytes of shared memory per block, static and dynamic
}

// registerUnit is the register allocation granularity: registers are
// given to a warp in units of 256 (compute capability 5.0 to 9.0).
const registerUnit = 256

// use is what one block of s takes on its SM under lim.
func (lim BudgetLimits) use(s Shape) smUse {
	warps := (max(1, s.Threads) + 31) / 32
	regs := s.Registers
	if regs <= 0 && lim.RegistersPerSM > 0 {
		// unknown: the most a thread of this block size may get
		regs = min(255, lim.RegistersPerSM/(warps*32))
	}
	perWarp := (regs*32 + registerUnit - 1) / registerUnit * registerUnit
	return smUse{blocks: 1, threads: warps * 32, regs: warps * perWarp, smem: s.SharedMem + lim.SharedMemReservedPerBlock}
}

// smUse is what the resident blocks of one SM take.
type smUse struct{ blocks, threads, regs, smem int }

func (u *smUse) add(b smUse, sign int) {
	u.blocks += sign * b.blocks
	u.threads += sign * b.threads
	u.regs += sign * b.regs
	u.smem += sign * b.smem
}

// ErrBudget is matched (errors.Is) by a *BudgetError: a persistent launch
// that does not fit beside the others within the device's budget, or a
// one-shot block that cannot become resident beside them.
var ErrBudget = errors.New("cuda: the launch does not fit the device's budget")

// BudgetError says which limit refused a launch and by how much.
type BudgetError struct {
	Launch string // what was launched: a ring program's grid, a ring, a one-shot kernel
	Shape  Shape
	Limit  string // "resident grids", "blocks per SM", "threads per SM", "registers per SM", "shared memory per SM"
	Need   int    // what one block (or the grid, for resident grids) needs of Limit
	Free   int    // what the fullest SM the launch could still use has left of it
	Grids  int    // persistent launches the budget holds
}

func (e *BudgetError) Error() string {
	if e.Limit == "resident grids" {
		return fmt.Sprintf("%s: %d persistent grids hold the device's resident grids less the reserve (%d free)",
			e.Launch, e.Grids, e.Free)
	}
	return fmt.Sprintf("%s (%d blocks of %d threads, %d registers, %d B shared memory): %s: a block needs %d, %d left beside %d persistent grids",
		e.Launch, e.Shape.Blocks, e.Shape.Threads, e.Shape.Registers, e.Shape.SharedMem, e.Limit, e.Need, e.Free, e.Grids)
}

// Is matches ErrBudget.
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// Claim is a persistent launch the Budget holds: its blocks' places in
// the model until Release.
type Claim struct {
	Name  string
	Shape Shape
	sms   []int
	b     *Budget
}

// Budget is a device's residency budget: every persistent launch
// (program grids, LaunchRingProgram rings) holds a Claim whose blocks the
// model places, each on the least loaded SM that holds it within the
// SM's capacity less the Reserve; a launch that does not fit wholly is
// refused. One-shot launches are checked against the whole capacity. Safe
// for concurrent use.
type Budget struct {
	mu      sync.Mutex
	lim     BudgetLimits
	res     Reserve
	sms     []smUse
	claims  map[*Claim]struct{}
	refused uint64
}

// NewBudget returns the budget of a device of lim keeping res for
// one-shot kernels.
func NewBudget(lim BudgetLimits, res Reserve) *Budget {
	return &Budget{lim: lim, res: res, sms: make([]smUse, max(1, lim.SMs)), claims: map[*Claim]struct{}{}}
}

// Limits returns the device's limits and reserve the budget holds.
func (b *Budget) Limits() (BudgetLimits, Reserve) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lim, b.res
}

// capacity is what persistent blocks may take of one SM.
func (b *Budget) capacity(reserve bool) smUse {
	c := smUse{blocks: b.lim.BlocksPerSM, threads: b.lim.ThreadsPerSM, regs: b.lim.RegistersPerSM, smem: b.lim.SharedMemPerSM}
	if reserve {
		c.blocks -= b.res.Blocks
		c.threads -= b.res.Threads
		c.regs -= b.res.Registers
		c.smem -= b.res.SharedMem
	}
	return c
}

// blocking returns the limit (and what a block needs of it, and what is
// left) that keeps block u off an SM using have within c, or "".
func blocking(have, u, c smUse, lim BudgetLimits) (string, int, int) {
	switch {
	case lim.BlocksPerSM > 0 && have.blocks+u.blocks > c.blocks:
		return "blocks per SM", u.blocks, c.blocks - have.blocks
	case lim.ThreadsPerSM > 0 && have.threads+u.threads > c.threads:
		return "threads per SM", u.threads, c.threads - have.threads
	case lim.RegistersPerSM > 0 && have.regs+u.regs > c.regs:
		return "registers per SM", u.regs, c.regs - have.regs
	case lim.SharedMemPerSM > 0 && have.smem+u.smem > c.smem:
		return "shared memory per SM", u.smem, c.smem - have.smem
	}
	return "", 0, 0
}

// place puts up to n blocks of u on the least loaded SMs that hold them
// within c (b.mu held), returning their SMs, and the refusal of the
// first block that found no room.
func (b *Budget) place(u smUse, n int, c smUse) ([]int, *BudgetError) {
	var placed []int
	for len(placed) < n {
		best := -1
		var refusal *BudgetError
		for i := range b.sms {
			if l, need, free := blocking(b.sms[i], u, c, b.lim); l != "" {
				if refusal == nil || free > refusal.Free {
					refusal = &BudgetError{Limit: l, Need: need, Free: free}
				}
				continue
			}
			if best < 0 || b.sms[i].threads < b.sms[best].threads ||
				(b.sms[i].threads == b.sms[best].threads && b.sms[i].blocks < b.sms[best].blocks) {
				best = i
			}
		}
		if best < 0 {
			return placed, refusal
		}
		b.sms[best].add(u, 1)
		placed = append(placed, best)
	}
	return placed, nil
}

func (b *Budget) unplace(u smUse, sms []int) {
	for _, sm := range sms {
		b.sms[sm].add(u, -1)
	}
}

// gridsFull reports the refusal of one more persistent grid when the
// resident grids less the reserve are taken (b.mu held).
func (b *Budget) gridsFull(name string, s Shape) *BudgetError {
	if b.lim.ResidentGrids <= 0 {
		return nil
	}
	if free := b.lim.ResidentGrids - b.res.Grids - len(b.claims); free <= 0 {
		return &BudgetError{Launch: name, Shape: s, Limit: "resident grids", Need: 1, Free: free, Grids: len(b.claims)}
	}
	return nil
}

// Claim holds s's blocks, all of them, for a persistent launch named
// name, or returns a *BudgetError (matching ErrBudget) and holds nothing.
func (b *Budget) Claim(name string, s Shape) (*Claim, error) {
	s.Blocks = max(1, s.Blocks)
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.gridsFull(name, s); e != nil {
		b.refused++
		return nil, e
	}
	u := b.lim.use(s)
	sms, e := b.place(u, s.Blocks, b.capacity(true))
	if e != nil {
		b.unplace(u, sms)
		b.refused++
		e.Launch, e.Shape, e.Grids = name, s, len(b.claims)
		return nil, e
	}
	c := &Claim{Name: name, Shape: s, sms: sms, b: b}
	b.claims[c] = struct{}{}
	return c, nil
}

// Fit returns how many blocks of s, at most s.Blocks, one more persistent
// launch could hold now, or the refusal (counted) when not even one fits.
func (b *Budget) Fit(name string, s Shape) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.gridsFull(name, s); e != nil {
		b.refused++
		return 0, e
	}
	u := b.lim.use(s)
	sms, e := b.place(u, max(1, s.Blocks), b.capacity(true))
	b.unplace(u, sms)
	if len(sms) == 0 {
		b.refused++
		e.Launch, e.Shape, e.Grids = name, s, len(b.claims)
		return 0, e
	}
	return len(sms), nil
}

// Release gives the claim's blocks back (a second call does nothing).
func (c *Claim) Release() {
	if c == nil {
		return
	}
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.claims[c]; !ok {
		return
	}
	delete(b.claims, c)
	b.unplace(b.lim.use(c.Shape), c.sms)
}

// Holds reports whether the budget holds any persistent launch.
func (b *Budget) Holds() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.claims) > 0
}

// CheckOneShot reports whether a block of the one-shot launch s can
// become resident beside the persistent claims (on the whole capacity of
// some SM, the reserve included): a *BudgetError matching ErrBudget if
// not, since on a GPU it would wait for them forever.
func (b *Budget) CheckOneShot(name string, s Shape) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.claims) == 0 {
		return nil
	}
	u := b.lim.use(s)
	sms, e := b.place(u, 1, b.capacity(false))
	b.unplace(u, sms)
	if e != nil {
		e.Launch, e.Shape, e.Grids = name, s, len(b.claims)
		return e
	}
	return nil
}

// BudgetStats is what a device's budget holds now.
type BudgetStats struct {
	Grids   int // persistent launches held
	Blocks  int // their blocks
	Refused uint64
	// The fullest SM's use, per resource, and what persistent launches may
	// take of an SM (its capacity less the reserve).
	MaxBlocksPerSM, MaxThreadsPerSM, MaxRegistersPerSM, MaxSharedMemPerSM int
	CapBlocksPerSM, CapThreadsPerSM, CapRegistersPerSM, CapSharedMemPerSM int
	Claims                                                                []ClaimStat
}

// ClaimStat is one persistent launch of BudgetStats.
type ClaimStat struct {
	Name  string
	Shape Shape
}

// Stats returns what the budget holds.
func (b *Budget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.capacity(true)
	s := BudgetStats{Grids: len(b.claims), Refused: b.refused, CapBlocksPerSM: c.blocks, CapThreadsPerSM: c.threads,
		CapRegistersPerSM: c.regs, CapSharedMemPerSM: c.smem}
	for _, u := range b.sms {
		s.MaxBlocksPerSM = max(s.MaxBlocksPerSM, u.blocks)
		s.MaxThreadsPerSM = max(s.MaxThreadsPerSM, u.threads)
		s.MaxRegistersPerSM = max(s.MaxRegistersPerSM, u.regs)
		s.MaxSharedMemPerSM = max(s.MaxSharedMemPerSM, u.smem)
	}
	for cl := range b.claims {
		s.Blocks += len(cl.sms)
		s.Claims = append(s.Claims, ClaimStat{cl.Name, cl.Shape})
	}
	sort.Slice(s.Claims, func(i, j int) bool { return s.Claims[i].Name < s.Claims[j].Name })
	return s
}

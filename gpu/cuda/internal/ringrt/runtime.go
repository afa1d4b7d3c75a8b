package ringrt

import (
	"context"

	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// HostPrograms is the part of a simulated device (gpu/cuda's HostDevice)
// that runs ring programs from their host source (ProgramSource.Host)
// rather than from PTX.
type HostPrograms interface {
	// LoadHostProgram builds src's host variant and returns the function
	// whose launches run it (building takes the host compiler; it is not
	// a driver call).
	LoadHostProgram(ctx context.Context, src *ProgramSource) (driverapi.Function, error)
	// AttachHostProgram is the module load of a program LoadHostProgram
	// built: a synchronising call, made on the device's thread (in a
	// device epoch when rings run).
	AttachHostProgram(fn driverapi.Function) error
	// HostGrid returns the function of the persistent grid of mailboxes
	// of a program LoadHostProgram built.
	HostGrid(fn driverapi.Function) (driverapi.Function, error)
	// ProgramCache says where the host build of src is kept and whether
	// it is built.
	ProgramCache(src *ProgramSource) (cache string, built bool)
}

// Options configure a Runtime; gpu/cuda fills them from its backend's
// options when the device opens.
type Options struct {
	// Name is the backend's name in errors ("cuda:0", "cuda:sim").
	Name string
	// Host is the simulated device's program loader, nil on the driver.
	Host HostPrograms
	// Target returns what ring programs are compiled into for the device
	// (sm_90 and a CUBIN, or compute_90 and PTX: gpu/cuda's
	// RingProgramTarget), or why none can be loaded (an NVRTC newer than
	// the driver; an error wrapping ErrNoNVRTC when there is no NVRTC).
	Target func() (driverapi.NVRTCTarget, error)
	// Compile compiles a program's device source with NVRTC for a target,
	// returning the image it names (gpu/cuda's Compile with its
	// RingProgramOptions).
	Compile Compiler
	// Mailboxes bounds each program grid's mailbox table (0:
	// DefaultMailboxes); MailboxInit is its first size (0: 1024; tests
	// lower it); MailboxPinnedMax bounds what a mailbox pins (0:
	// MailboxPinnedMax); MailboxPinnedTotal bounds what the device's
	// mailboxes pin together (0: MailboxPinnedTotal).
	Mailboxes, MailboxInit, MailboxPinnedMax, MailboxPinnedTotal int
	// GridLimit is how many program grids the device may run (0: its
	// resident grids less the reserve; tests lower it); MaxResidentGrids
	// is the device profile's resident grids (0: 128).
	GridLimit, MaxResidentGrids int
	// GridBlocks is every program grid's block count (0: one block per
	// SM, fewer when the device's budget has less room; tests and
	// WithGridBlocks set their own).
	GridBlocks int
}

// Runtime is the ring runtime of one open device: its ring programs,
// ring kernels, program grids and mailboxes, and device epochs.
type Runtime struct {
	d   *devcore.Device
	opt Options

	// thread-confined
	grids  map[gridKey]*ringGrid // ring program grids (grid.go)
	pinned int                   // bytes the mailboxes' control blocks and rings pin
	// hostProgs are the simulated device's loaded ring programs by source
	// hash (Load loads a source once per device, as d.Modules does on a GPU).
	hostProgs map[[32]byte]driverapi.Function
}

// New returns the ring runtime of d. The device's epochs then poll the
// rings with the runtime's wait strategy, and its close stops the rings
// first.
func New(d *devcore.Device, opt Options) *Runtime {
	rt := &Runtime{d: d, opt: opt, hostProgs: map[[32]byte]driverapi.Function{}}
	d.Epochs.Wait = terminateWait
	d.BeforeClose = rt.stopRings
	return rt
}

// sim reports whether the device is simulated.
func (rt *Runtime) sim() bool { return rt.opt.Host != nil }

// argPtr is a device pointer as a kernel argument.
func argPtr(p driverapi.DevicePtr) uint64 { return uint64(p) }

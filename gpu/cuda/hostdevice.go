package cuda

import "context"

// HostDevice is a device a [Backend] runs on instead of the driver: a
// device simulated on the host, as package gpu/cuda/simdevice provides
// (its NewBackend is the usual way to get one). Besides the [DeviceAPI]
// it knows its own hardware and runs ring programs from their host
// source ([RingProgramSource.Host]) rather than from PTX. The cuda package
// itself links no simulator: a program that never imports one builds the
// real device only.
type HostDevice interface {
	DeviceAPI
	// SetProfile makes p the device's hardware. The backend calls it when
	// it opens with [WithDeviceProfile]'s profile, before its first
	// stream.
	SetProfile(p DeviceProfile)
	// Profile is the device's hardware (the backend's Profile without
	// WithDeviceProfile).
	Profile() DeviceProfile
	// LoadHostProgram builds src's host variant and returns the function
	// whose launches run it (building takes the host compiler; it is not
	// a driver call).
	LoadHostProgram(ctx context.Context, src *RingProgramSource) (Function, error)
	// AttachHostProgram is the module load of a program LoadHostProgram
	// built: a synchronising call, made on the device's thread (in a
	// device epoch when rings run).
	AttachHostProgram(fn Function) error
	// HostGrid returns the function of the persistent grid of mailboxes
	// of a program LoadHostProgram built.
	HostGrid(fn Function) (Function, error)
	// ProgramCache says where the host build of src is kept and whether
	// it is built ([Backend.RingProgramCache]).
	ProgramCache(src *RingProgramSource) (cache string, built bool)
}

// NewHostBackend returns a Backend whose device is dev, named name (a
// simulated device's "cuda:sim"), of the given ordinal, with info as the
// probe's description of it (its Report's LibraryPath is "host"). Its
// calls run on a locked OS thread of its own, as a [Context]'s do.
// [WithOrdinal] does not apply to it. Close it when done.
func NewHostBackend(dev HostDevice, name string, ordinal int, info DeviceInfo, opts ...BackendOption) *Backend {
	var b *Backend
	b = newBackend(func() Report {
		return Report{LibraryLoaded: true, LibraryPath: "host", Devices: []DeviceInfo{info}}
	}, func() (DeviceAPI, runner, Device, int, error) {
		if b.profile != nil {
			if err := b.profile.Validate(); err != nil {
				return nil, nil, 0, 0, err
			}
			dev.SetProfile(*b.profile)
		}
		w, err := startWorker(nil, nil)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		return dev, workerRunner{w}, 0, ordinal, nil
	})
	b.name, b.ordinal, b.sim = name, ordinal, dev
	b.alloc.name = name
	for _, o := range opts {
		o(b)
	}
	return b
}

// HostDevice returns the device of a backend from [NewHostBackend], or
// nil for one on the driver.
func (b *Backend) HostDevice() HostDevice { return b.sim }

// workerRunner is a runner without a driver context: a locked worker
// thread.
type workerRunner struct{ w *worker }

func (r workerRunner) Do(fn func() error) error { return r.w.do(fn) }
func (r workerRunner) Close() error             { return r.w.close() }

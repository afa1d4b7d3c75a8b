package cuda

import (
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/ringrt"
)

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
	// The ring programs' part: LoadHostProgram, AttachHostProgram,
	// HostGrid and ProgramCache ([Backend.RingProgramCache]).
	ringrt.HostPrograms
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
		w, err := devcore.StartWorker(nil, nil)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		return dev, w, 0, ordinal, nil
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

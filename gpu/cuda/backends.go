package cuda

import "strconv"

// WithOrdinal makes a [NewBackend] backend open device i (default 0)
// instead of device 0: its Name is "cuda:i". A backend whose ordinal the
// driver does not list reports it through Available. A [NewHostBackend]
// (a simulated device) ignores it: its ordinal is NewHostBackend's.
func WithOrdinal(i int) BackendOption {
	return func(b *Backend) {
		if i < 0 || b.sim != nil {
			return
		}
		b.ordinal = i
		b.name = BackendName + ":" + strconv.Itoa(i)
		b.alloc.name = b.name
		if b.openFn == nil || b.ordinalOpen {
			b.ordinalOpen = true
			b.openFn = func() (DeviceAPI, runner, Device, int, error) {
				c, err := NewContext(i)
				if err != nil {
					return nil, nil, 0, 0, err
				}
				return c.Driver(), c, c.Device(), c.Ordinal(), nil
			}
		}
	}
}

// NewBackends returns one backend for every device the driver lists, in
// ordinal order ("cuda:0", "cuda:1", …), each with opts. Without a usable
// device it returns the one backend of device 0, whose Available says why.
// It probes the driver now (NewBackend probes on first use).
func NewBackends(opts ...BackendOption) []*Backend {
	n := len(Probe().Devices)
	if n <= 1 {
		return []*Backend{NewBackend(opts...)}
	}
	out := make([]*Backend, n)
	for i := range out {
		out[i] = NewBackend(append([]BackendOption{WithOrdinal(i)}, opts...)...)
	}
	return out
}

// Ordinal is the device ordinal the backend opens (WithOrdinal; for a
// [NewHostBackend], its ordinal argument: simdevice.NewBackends' index).
func (b *Backend) Ordinal() int { return b.ordinal }

// DeviceInfo describes the backend's device as the driver probe found it
// (name, memory, compute capability, …); ok is false when the probe
// lists no device of the backend's ordinal.
func (b *Backend) DeviceInfo() (info DeviceInfo, ok bool) {
	r := b.probe()
	for _, d := range r.Devices {
		if d.Index == b.ordinal {
			return d, true
		}
	}
	if b.sim != nil && len(r.Devices) > 0 {
		return r.Devices[0], true
	}
	return DeviceInfo{}, false
}

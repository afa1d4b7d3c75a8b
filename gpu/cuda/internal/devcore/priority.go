package devcore

import "github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"

// StreamPriorities are the stream priorities of a device's streams: the
// context's range (numerically lower is higher priority: an H100 has
// least 0, greatest -5) and the one-shot stream's. The one-shot stream
// (Device.Stream: Execute, RunPTX, copies) is created at Greatest and the
// streams of persistent launches (rings, program grids) at Least, so the
// block scheduler starts pending one-shot blocks first wherever an SM has
// room; no running block is preempted. Without stream priorities in the
// driver (no driverapi.StreamPriorityAPI, or its range query fails)
// Supported is false and every stream has the default priority.
type StreamPriorities struct {
	Supported       bool
	Least, Greatest int
	OneShot         int // the one-shot stream's: Greatest when Supported
}

// openStream creates the one-shot stream (inside Do, at Open): at the
// device's greatest priority when the driver has stream priorities.
func (d *Device) openStream() error {
	if sp, ok := d.API.(driverapi.StreamPriorityAPI); ok {
		if least, greatest, err := sp.CtxGetStreamPriorityRange(); err == nil {
			d.Priorities = StreamPriorities{Supported: true, Least: least, Greatest: greatest}
		}
	}
	s, err := d.NewStream(d.Priorities.Greatest)
	if err != nil {
		return err
	}
	d.Stream, d.Priorities.OneShot = s, d.Priorities.Greatest
	return nil
}

// NewStream creates a non-blocking stream (inside Do) at priority when the
// device has stream priorities (the driver clamps it to the range), else
// a plain one. The caller destroys it.
func (d *Device) NewStream(priority int) (driverapi.Stream, error) {
	if sp, ok := d.API.(driverapi.StreamPriorityAPI); ok && d.Priorities.Supported {
		return sp.StreamCreateWithPriority(driverapi.StreamNonBlocking, priority)
	}
	return d.API.StreamCreate(driverapi.StreamNonBlocking)
}

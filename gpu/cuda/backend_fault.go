package cuda

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ringactor/ringactor/gpu"
)

var failedBackends sync.Map // *Backend → error: device faults, sticky

// MarkFailed records that the backend's device faulted (a ring kernel's
// trap or illegal address: sticky for the whole context on a GPU): from
// now on Available and Failed return a *gpu.DeviceError (gpu.DeviceFailed)
// wrapping err, so nothing new is placed on it. The first fault is kept.
func (b *Backend) MarkFailed(err error) {
	if err == nil {
		err = errors.New("device fault")
	}
	failedBackends.LoadOrStore(b, err)
}

// Failed returns the error of a fault recorded by MarkFailed, or nil.
func (b *Backend) Failed() error {
	v, ok := failedBackends.Load(b)
	if !ok {
		return nil
	}
	return &gpu.DeviceError{Kind: gpu.DeviceFailed, Backend: b.name,
		Reason: fmt.Sprintf("the device faulted and is not used any more: %v", v), Err: v.(error)}
}

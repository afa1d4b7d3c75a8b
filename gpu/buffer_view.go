package gpu

import "fmt"

// View returns a 1-D buffer over elements [lo, hi) of b's host memory,
// sharing it (writes through the view are writes to b). A view has no device
// memory of its own until EnsureOnDevice gives it some, so chunks of a large
// buffer can be moved to a device one at a time; call EnsureOnHost on the
// view to bring its results back into b. Freeing a view never frees b's
// storage. b must not be device-dirty (call b.EnsureOnHost first).
func (b *UnifiedBuffer) View(lo, hi int) (*UnifiedBuffer, error) {
	if b.released() {
		return nil, freedErr("view")
	}
	if lo < 0 || hi > b.n || lo >= hi {
		return nil, &ShapeError{Shape: Shape{hi - lo}, Reason: fmt.Sprintf("view [%d, %d) of a buffer of %d elements", lo, hi, b.n)}
	}
	if b.deviceDirty {
		return nil, &MemoryError{Op: "view", Reason: "buffer's newest data is on the device: EnsureOnHost first"}
	}
	size := b.dtype.Size()
	v := &UnifiedBuffer{dtype: b.dtype, n: hi - lo, host: b.host[lo*size : hi*size : hi*size], hostDirty: true}
	v.setShape(Shape{hi - lo})
	return v, nil
}

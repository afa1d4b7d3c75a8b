package cuda

import "time"

// BackendOption configures a Backend ([NewBackend], [NewHostBackend]).
type BackendOption func(*Backend)

// WithArenaBytes sets the pinned memory reserved when the device opens,
// before any ring kernel runs (default DefaultArenaBytes). Ring control
// blocks and slabs and copy staging come from it; when it is full it
// grows in a device epoch, which parks the live rings, so size it for the
// rings a program runs at once: each takes about 2 × capacity × slot size.
func WithArenaBytes(n int) BackendOption {
	return func(b *Backend) {
		if n > 0 {
			b.arenaBytes = uintptr(n)
		}
	}
}

// WithParkTimeout bounds how long a device epoch waits for each live ring
// kernel to acknowledge its park (default DefaultParkTimeout). A ring
// that does not (a handler that never returns) fails the epoch with
// ErrEpochTimeout, and the synchronising call is not made.
func WithParkTimeout(d time.Duration) BackendOption {
	return func(b *Backend) {
		if d > 0 {
			b.parkTimeout = d
		}
	}
}

// WithEpochSpacing sets the least time the ring kernels run between two
// device epochs (default DefaultEpochSpacing; 0 keeps only the other
// rule): an epoch parks no sooner than max(d, the previous epoch's
// duration) after the previous one relaunched the rings, so a storm of
// epochs leaves the rings at least half the time. Negative values are
// ignored.
func WithEpochSpacing(d time.Duration) BackendOption {
	return func(b *Backend) {
		if d >= 0 {
			b.epochSpacing = d
		}
	}
}

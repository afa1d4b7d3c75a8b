// Package devcore is the device core of the CUDA backend: what an open
// device owns below both the one-shot backend and the ring runtime. Today
// it holds the device's thread (Worker: a goroutine locked to an OS
// thread, on which a driver context is current), the pinned arena
// (Arena), the pacing of device epochs (Pace: requests sharing an
// epoch, spacing between epochs) and the epoch registry (Epochs: the live
// rings as Parkables, parked around a synchronising call); the device
// itself (staging, the allocator, batches) follows them here from
// gpu/cuda, after
// which the ring runtime gets a package of its own over this one
// (docs/DESIGN.md, "The device ring runtime's own package").
//
// Everything here is confined to the device's thread unless its doc says
// otherwise.
package devcore

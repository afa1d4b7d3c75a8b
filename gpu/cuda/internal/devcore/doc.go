// Package devcore is the device core of the CUDA backend: what an open
// device owns below both the one-shot backend and the ring runtime. It
// holds the open device (Device: attributes, the backend's stream, pinned
// staging, the stream-ordered or fallback allocator, batches, the loaded
// modules), the device's thread (Worker: a goroutine locked to an OS
// thread, on which a driver context is current), the pinned arena
// (Arena), the pacing of device epochs (Pace: requests sharing an epoch,
// spacing between epochs) and the epoch registry (Epochs, embedded in
// Device: the live rings as Parkables, parked around a synchronising
// call). The one-shot backend and the ring runtime (both in gpu/cuda
// today) work on a *Device.
//
// Everything here is confined to the device's thread unless its doc says
// otherwise.
package devcore

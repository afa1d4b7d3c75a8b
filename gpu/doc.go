// Package gpu holds what every compute backend shares: the ring protocol
// (single-producer/single-consumer rings and the per-kernel control block),
// the error hierarchy of compute failures, and the device abstractions that
// the CPU backend (gpu/cpu) and the CUDA backend implement.
//
// The ring protocol is the same on both backends. Indices grow monotonically
// and a slot is index & (capacity-1). The producer writes a slot and then
// publishes its index with a release store; the consumer acquire-loads that
// index, reads the slot and release-stores its own index. No
// read-modify-write atomic is shared between producer and consumer, so the
// same protocol works across PCIe where such atomics are not available.
package gpu

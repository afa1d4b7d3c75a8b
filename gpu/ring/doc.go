// Package ring owns ringactor's ring protocol, the one both backends and
// the actors run: single-producer/single-consumer rings of Go values
// ([Ring]) and of fixed-size byte slots in raw memory shared with a device
// ([SlotRing], [RingHeader], [SlotHeader], flags and status codes), the
// per-kernel [ControlBlock] (gate, terminate mode, terminated ack,
// counters, latency), the persistent consumer [Loop], and the idle
// machinery: [Signal] and the phased [WaitStrategy] (spin → yield → sleep
// → park) with its stateful [Waiter].
//
// Indices grow monotonically and a slot is index & (capacity-1), capacity a
// power of two. The producer writes a slot and then publishes its index
// with a release store; the consumer acquire-loads that index, reads the
// slot and release-stores its own index. No read-modify-write atomic is
// shared between producer and consumer, so the same protocol works across
// PCIe where such atomics are not available. Every shared word is a [Word],
// alone on its cache line.
//
// The C side of the shared layouts (gpu/cuda/kernels/ring_abi_gen.h) is
// generated from the Go types here by internal/abigen (go generate
// ./gpu/ring), with static assertions on every size and offset, so device
// code and the host shim fail to compile when they drift.
//
// This package imports nothing else of ringactor.
package ring

//go:generate go run ./internal/abigen -o ../cuda/kernels/ring_abi_gen.h

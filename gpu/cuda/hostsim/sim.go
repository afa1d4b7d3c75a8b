//go:build linux && cgo

package hostsim

/*
#cgo CXXFLAGS: -std=c++20 -O2
#cgo LDFLAGS: -lstdc++ -lpthread
#include "hostsim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ring"
)

// Config shaped the built-in switch kernel that [Launch] started.
//
// Deprecated: Launch no longer starts anything; a device ring kernel is a
// ring program (gpu/cuda's LoadRingProgram and LaunchRingProgram).
type Config struct {
	Capacity int // slots per ring, a power of two (default 64)
	SlotSize int // bytes per slot, a multiple of 16 (default SlotSizeMin)
	Threads  int // threads of the loop's block (default 4)
}

// ErrBusy was returned by [Launch] while another persistent loop ran in
// this process. It is no longer returned; it stays for code that tests
// for it.
//
// Deprecated: never returned.
var ErrBusy = errors.New("hostsim: another persistent loop is running")

// ErrLaunchRemoved is the error of the deprecated [Launch] (it also wraps
// gpu.ErrArgument): the built-in switch kernel (rc_ring_kernel) it ran on
// host threads was removed.
var ErrLaunchRemoved = errors.New("hostsim: Launch's built-in switch kernel was removed: run a ring program (gpu/cuda LoadRingProgram and LaunchRingProgram on the simulated backend, or BuildProgram and Device.LaunchProgram)")

// Kernel was the built-in switch kernel running on host threads. Launch
// no longer returns one; its methods do nothing on the zero Kernel.
//
// Deprecated: use gpu/cuda's RingKernel of a ring program on the
// simulated backend (cuda.NewSimulatedBackend).
type Kernel struct {
	cb      *ring.ControlBlock
	in, out *ring.SlotRing
}

// Launch started the built-in switch kernel (rc_ring_kernel), which
// dispatched the nine gpu/ringmsg operations on each message's type id.
// That kernel was removed, so Launch starts nothing and returns an error
// wrapping ErrLaunchRemoved and gpu.ErrArgument.
//
// Deprecated: on the simulated backend, load a ring program with
// cuda.Backend.LoadRingProgram (for a built-in: ringmsg.DeviceCode and
// the op's DeviceEntry) and launch it with LaunchRingProgram.
func Launch(cfg Config) (*Kernel, error) {
	return nil, fmt.Errorf("%w (%w)", ErrLaunchRemoved, gpu.ErrArgument)
}

// Control returns the kernel's control block (nil on the zero Kernel).
func (k *Kernel) Control() *ring.ControlBlock { return k.cb }

// Input returns the host → kernel ring (nil on the zero Kernel).
func (k *Kernel) Input() *ring.SlotRing { return k.in }

// Output returns the kernel → host ring (nil on the zero Kernel).
func (k *Kernel) Output() *ring.SlotRing { return k.out }

// Terminate asked the loop to exit; it does nothing on the zero Kernel.
func (k *Kernel) Terminate(mode ring.TerminateMode) {
	if k.cb != nil {
		k.cb.Terminate.Store(uint64(mode))
	}
}

// Wait returns the terminated ack (0 on the zero Kernel).
func (k *Kernel) Wait() uint64 {
	if k.cb == nil {
		return 0
	}
	return k.cb.TerminatedAck.Load()
}

// Close does nothing: no Kernel holds a loop or memory any more.
func (k *Kernel) Close() {}

// TryPush pushes msg as a message of the given type, stamped with the
// admission time. Producer side only.
func TryPush[T any](r *ring.SlotRing, typeID uint32, correlationID uint64, msg *T) bool {
	b := unsafe.Slice((*byte)(unsafe.Pointer(msg)), unsafe.Sizeof(*msg))
	return r.TryPushRaw(ring.SlotHeader{TypeID: typeID, CorrelationID: correlationID, TimestampNS: uint64(time.Now().UnixNano())}, b)
}

// Decode copies a payload into a T; the length must be exactly T's size.
func Decode[T any](b []byte) (T, error) {
	var v T
	if uintptr(len(b)) != unsafe.Sizeof(v) {
		return v, fmt.Errorf("hostsim: payload of %d bytes, %T needs %d", len(b), v, unsafe.Sizeof(v))
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&v)), len(b)), b)
	return v, nil
}

// KernelsStamp is the kernel-source hash this package was compiled with.
func KernelsStamp() string { return C.GoString(C.rc_hs_kernels_stamp()) }

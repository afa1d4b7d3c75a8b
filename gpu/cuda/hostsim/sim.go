//go:build linux && cgo

package hostsim

/*
#cgo CXXFLAGS: -std=c++20 -O2
#cgo LDFLAGS: -lstdc++ -lpthread
#include "hostsim.h"
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/ring"
)

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

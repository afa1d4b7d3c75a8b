package hostsim

import (
	"sync/atomic"

	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// Go mirrors of kernels/ring_abi.h. layout_test.go compares each with its C
// struct (size and field offsets through cgo); constants_test.go compares
// the constants.

// Terminate modes (the control block's terminate word).
const (
	TerminateDrain uint64 = 1 // handle what is queued (gate ignored), then exit
	TerminateNow   uint64 = 2 // exit after the message in hand
)

// Terminated-ack values.
const (
	Terminated          uint64 = 1
	TerminatedBadLaunch uint64 = 2
)

// Slot flags.
const (
	FlagReply uint32 = 1
	FlagError uint32 = 2
)

// Reply status codes.
const (
	StatusOK          uint32 = 0
	StatusUnknownType uint32 = 1
	StatusBadLength   uint32 = 2
	StatusBadArgs     uint32 = 3
)

// Message kinds (type ids) of the built-in handlers.
const (
	MsgAdd       uint32 = 1
	MsgMul       uint32 = 2
	MsgScale     uint32 = 3
	MsgReLU      uint32 = 4
	MsgLeakyReLU uint32 = 5
	MsgSum       uint32 = 6
	MsgMin       uint32 = 7
	MsgMax       uint32 = 8
	MsgSpMV      uint32 = 9
)

// Payload limits.
const (
	VecMax      = ringmsg.VecMax
	SpMVMaxRows = ringmsg.SpMVMaxRows
	SpMVMaxCols = ringmsg.SpMVMaxCols
	SpMVMaxNNZ  = ringmsg.SpMVMaxNNZ
	SlotSizeMin = 4096
	// RingMaxBlock is the largest thread count of the persistent loop.
	RingMaxBlock = 256
)

// Word is a 64-bit word alone on its cache line (rc_padded_u64).
type Word struct {
	atomic.Uint64
	_ [56]byte
}

// RingHeader mirrors rc_ring_header; the slots follow it in memory.
type RingHeader struct {
	Head     Word // consumer's index
	Tail     Word // producer's index
	Capacity uint64
	SlotSize uint64
	_        [48]byte
}

// SlotHeader mirrors rc_slot_header.
type SlotHeader struct {
	TypeID        uint32
	Flags         uint32
	CorrelationID uint64
	Length        uint32
	Status        uint32
	TimestampNS   uint64
}

// The payloads of the built-in handlers are gpu/ringmsg's types, which
// the runtime sends to device ring kernels; layout_test.go compares them
// with the C structs of ring_abi.h.
type (
	VecMsg      = ringmsg.VecMsg      // rc_vec_msg (MsgAdd, MsgMul)
	UnaryMsg    = ringmsg.UnaryMsg    // rc_unary_msg (MsgScale, MsgReLU, MsgLeakyReLU)
	ReduceMsg   = ringmsg.ReduceMsg   // rc_reduce_msg (MsgSum, MsgMin, MsgMax)
	SpMVMsg     = ringmsg.SpMVMsg     // rc_spmv_msg (MsgSpMV)
	VecReply    = ringmsg.VecReply    // rc_vec_reply
	ScalarReply = ringmsg.ScalarReply // rc_scalar_reply
	SpMVReply   = ringmsg.SpMVReply   // rc_spmv_reply
)

package hostsim

import "sync/atomic"

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
	VecMax      = 256
	SpMVMaxRows = 64
	SpMVMaxCols = 128
	SpMVMaxNNZ  = 256
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

// VecMsg mirrors rc_vec_msg (MsgAdd, MsgMul).
type VecMsg struct {
	N        uint32
	Reserved uint32
	A        [VecMax]float32
	B        [VecMax]float32
}

// UnaryMsg mirrors rc_unary_msg (MsgScale, MsgReLU, MsgLeakyReLU).
type UnaryMsg struct {
	N     uint32
	Param float32
	X     [VecMax]float32
}

// ReduceMsg mirrors rc_reduce_msg (MsgSum, MsgMin, MsgMax).
type ReduceMsg struct {
	N        uint32
	Reserved uint32
	X        [VecMax]float32
}

// SpMVMsg mirrors rc_spmv_msg.
type SpMVMsg struct {
	Rows, Cols, NNZ, Reserved uint32
	RowPtr                    [SpMVMaxRows + 1]int32
	ColIdx                    [SpMVMaxNNZ]int32
	Values                    [SpMVMaxNNZ]float32
	X                         [SpMVMaxCols]float32
}

// VecReply mirrors rc_vec_reply.
type VecReply struct {
	N        uint32
	Reserved uint32
	Y        [VecMax]float32
}

// ScalarReply mirrors rc_scalar_reply.
type ScalarReply struct {
	N        uint32
	Reserved uint32
	Value    float64
}

// SpMVReply mirrors rc_spmv_reply.
type SpMVReply struct {
	Rows     uint32
	Reserved uint32
	Y        [SpMVMaxRows]float32
}

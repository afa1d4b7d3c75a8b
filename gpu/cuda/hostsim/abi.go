package hostsim

import (
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// The ring protocol's shared layouts (control block, ring and slot
// headers, terminate modes, flags, status codes) are gpu/ring's, from which
// kernels/ring_abi_gen.h is generated; layout_test.go still compares them
// with the C structs through cgo. The payloads and message kinds of the
// built-in handlers below mirror kernels/ring_abi.h; layout_test.go
// compares each with its C struct (size and field offsets) and the
// constants with the C macros.

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

// Deprecated aliases of the protocol names that moved to gpu/ring.
const (
	// Deprecated: use ring.TerminateDrain.
	TerminateDrain = ring.TerminateDrain
	// Deprecated: use ring.TerminateNow.
	TerminateNow = ring.TerminateNow
	// Deprecated: use ring.Terminated.
	Terminated = ring.Terminated
	// Deprecated: use ring.TerminatedBadLaunch.
	TerminatedBadLaunch = ring.TerminatedBadLaunch
	// Deprecated: use ring.FlagReply.
	FlagReply = ring.FlagReply
	// Deprecated: use ring.FlagError.
	FlagError = ring.FlagError
	// Deprecated: use ring.StatusOK.
	StatusOK = ring.StatusOK
	// Deprecated: use ring.StatusUnknownType.
	StatusUnknownType = ring.StatusUnknownType
	// Deprecated: use ring.StatusBadLength.
	StatusBadLength = ring.StatusBadLength
	// Deprecated: use ring.StatusBadArgs.
	StatusBadArgs = ring.StatusBadArgs
)

// Word is a 64-bit word alone on its cache line.
//
// Deprecated: use ring.Word.
type Word = ring.Word

// RingHeader starts a slot ring's memory.
//
// Deprecated: use ring.RingHeader.
type RingHeader = ring.RingHeader

// SlotHeader starts every slot.
//
// Deprecated: use ring.SlotHeader.
type SlotHeader = ring.SlotHeader

// Ring is one slot ring in C memory, driven from the host.
//
// Deprecated: use ring.SlotRing.
type Ring = ring.SlotRing

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

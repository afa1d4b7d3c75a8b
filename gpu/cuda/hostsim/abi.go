package hostsim

import (
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// The ring protocol's shared layouts (control block, ring and slot
// headers, terminate modes, flags, status codes) are gpu/ring's, from which
// kernels/ring_abi_gen.h is generated; layout_test.go still compares them
// with the C structs through cgo. The built-in handlers' payloads are
// gpu/ringmsg's types, whose C structs are generated from the Go types
// with every ring program (no hand-written mirror).

// Message kinds (type ids) of the built-in handlers, which the removed
// switch kernel dispatched on; each equals the ringmsg op's TypeID.
const (
	// Deprecated: use ringmsg.Add.TypeID().
	MsgAdd uint32 = 1
	// Deprecated: use ringmsg.Mul.TypeID().
	MsgMul uint32 = 2
	// Deprecated: use ringmsg.Scale.TypeID().
	MsgScale uint32 = 3
	// Deprecated: use ringmsg.ReLU.TypeID().
	MsgReLU uint32 = 4
	// Deprecated: use ringmsg.LeakyReLU.TypeID().
	MsgLeakyReLU uint32 = 5
	// Deprecated: use ringmsg.Sum.TypeID().
	MsgSum uint32 = 6
	// Deprecated: use ringmsg.Min.TypeID().
	MsgMin uint32 = 7
	// Deprecated: use ringmsg.Max.TypeID().
	MsgMax uint32 = 8
	// Deprecated: use ringmsg.SpMV.TypeID().
	MsgSpMV uint32 = 9
)

// Payload limits.
const (
	VecMax      = ringmsg.VecMax
	SpMVMaxRows = ringmsg.SpMVMaxRows
	SpMVMaxCols = ringmsg.SpMVMaxCols
	SpMVMaxNNZ  = ringmsg.SpMVMaxNNZ
	SlotSizeMin = 4096
	// RingMaxBlock was the largest thread count of the removed switch
	// kernel.
	//
	// Deprecated: a ring program's block may have up to 1024 threads.
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
// the runtime sends to device ring kernels (their C structs are generated
// from these Go types).
type (
	VecMsg      = ringmsg.VecMsg      // ringmsg.Add, ringmsg.Mul
	UnaryMsg    = ringmsg.UnaryMsg    // ringmsg.Scale, ringmsg.ReLU, ringmsg.LeakyReLU
	ReduceMsg   = ringmsg.ReduceMsg   // ringmsg.Sum, ringmsg.Min, ringmsg.Max
	SpMVMsg     = ringmsg.SpMVMsg     // ringmsg.SpMV
	VecReply    = ringmsg.VecReply    // the vector ops' reply
	ScalarReply = ringmsg.ScalarReply // the reductions' reply
	SpMVReply   = ringmsg.SpMVReply   // ringmsg.SpMV's reply
)

package sensor

import (
	"fmt"
	"math"
)

// Defaults of a Config.
const (
	DefaultWindowMS     = 1000
	DefaultChunkBytes   = 128 << 10 // some 4,000–5,000 rows of typical CSV per message
	DefaultRingCapacity = 8
)

// Config is a pipeline's parameters. The zero value is not usable (its scale
// would be 0 and its window empty); start from DefaultConfig.
type Config struct {
	// WindowMS is the tumbling window's width W in milliseconds, at least 1.
	WindowMS int64
	// Scale and Offset map every value v to v·Scale + Offset; both finite.
	Scale, Offset float64
	// Streaming emits windows as they close instead of holding every
	// window until the end of input; see the package documentation.
	Streaming bool
	// LatenessMS is L in streaming mode: a window closes once the newest
	// timestamp is L past its end. At least 0; ignored unless Streaming.
	LatenessMS int64
	// LimitRejects stops the run once more than MaxRejects rows have been
	// rejected (late rows included): the rejects up to that row are
	// written, and Run fails with an error that wraps ErrTooManyRejects.
	// Unset, any number of rows may be rejected.
	LimitRejects bool
	// MaxRejects is how many rejected rows a run with LimitRejects
	// tolerates, at least 0.
	MaxRejects int64
	// ChunkBytes is the size of the reader's chunks (0: DefaultChunkBytes).
	// A line longer than a chunk gets a chunk of its own.
	ChunkBytes int
	// RingCapacity is each stage's input ring, in messages, a power of two
	// at least 2 (0: DefaultRingCapacity).
	RingCapacity int
	// DeviceScale runs the scale stage's arithmetic as a device ring kernel
	// (NewDeviceScaleKernel): on the runtime's CUDA backend (or the
	// simulated device) where one can run it, else its Go fallback; the
	// output is the same bit for bit.
	DeviceScale bool
	// OnStage, if set, is told where each stage runs ("cpu", "cuda:0",
	// "cuda:sim"), stage by stage (parse, scale, window, sink), once the
	// pipeline is launched.
	OnStage func(stage, placement string)
}

// DefaultConfig is W = 1000 ms, scale 1, offset 0, every window held until
// the end of input.
func DefaultConfig() Config {
	return Config{WindowMS: DefaultWindowMS, Scale: 1}
}

// withDefaults fills the zero tuning fields.
func (c Config) withDefaults() Config {
	if c.ChunkBytes == 0 {
		c.ChunkBytes = DefaultChunkBytes
	}
	if c.RingCapacity == 0 {
		c.RingCapacity = DefaultRingCapacity
	}
	return c
}

// Validate reports the first parameter out of range.
func (c Config) Validate() error {
	switch {
	case c.WindowMS < 1:
		return fmt.Errorf("sensor: window %d ms, want at least 1", c.WindowMS)
	case math.IsNaN(c.Scale) || math.IsInf(c.Scale, 0):
		return fmt.Errorf("sensor: scale %v, want a finite number", c.Scale)
	case math.IsNaN(c.Offset) || math.IsInf(c.Offset, 0):
		return fmt.Errorf("sensor: offset %v, want a finite number", c.Offset)
	case c.Streaming && c.LatenessMS < 0:
		return fmt.Errorf("sensor: lateness %d ms, want at least 0", c.LatenessMS)
	case c.LimitRejects && c.MaxRejects < 0:
		return fmt.Errorf("sensor: max rejects %d, want at least 0", c.MaxRejects)
	case c.ChunkBytes < 0:
		return fmt.Errorf("sensor: chunk size %d bytes, want at least 1", c.ChunkBytes)
	case c.RingCapacity < 0 || c.RingCapacity == 1 || c.RingCapacity&(c.RingCapacity-1) != 0:
		return fmt.Errorf("sensor: ring capacity %d, want a power of two, at least 2", c.RingCapacity)
	}
	return nil
}

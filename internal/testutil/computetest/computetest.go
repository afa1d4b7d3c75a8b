// Package computetest holds the helpers that the tests of the compute API
// share (package compute's and package actors', which forwards it): buffers
// from values, their contents back, and an errors.Is assertion.
package computetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// F32 returns a buffer holding a copy of v; it fails t if the buffer cannot
// be made.
func F32(t testing.TB, v ...float32) *gpu.UnifiedBuffer {
	t.Helper()
	b, err := gpu.NewBuffer(slices.Clone(v))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Read returns b's elements as a []T; it fails t if they cannot be read as
// T.
func Read[T gpu.Number](t testing.TB, b *gpu.UnifiedBuffer) []T {
	t.Helper()
	v, err := gpu.ToSlice[T](context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Bufs returns its arguments as a slice: a kernel's inputs.
func Bufs(b ...*gpu.UnifiedBuffer) []*gpu.UnifiedBuffer { return b }

// WantErr fails t unless errors.Is(err, target).
func WantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

package computetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestBuffersRoundTrip(t *testing.T) {
	b := F32(t, 1, 2.5, -3)
	if got := Read[float32](t, b); !slices.Equal(got, []float32{1, 2.5, -3}) {
		t.Fatalf("Read = %v", got)
	}
	if got := Bufs(b, b); len(got) != 2 || got[0] != b || got[1] != b {
		t.Fatalf("Bufs = %v", got)
	}
}

func TestWantErrMatchesWrapped(t *testing.T) {
	target := errors.New("target")
	WantErr(t, fmt.Errorf("wrapped: %w", target), target)
}

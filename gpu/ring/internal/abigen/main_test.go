package main

import (
	"bytes"
	"os"
	"testing"
)

// TestHeaderInSync regenerates gpu/cuda/kernels/ring_abi_gen.h and compares
// it with the committed file (go generate ./gpu/ring writes it).
func TestHeaderInSync(t *testing.T) {
	got, err := Generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../../cuda/kernels/ring_abi_gen.h")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("gpu/cuda/kernels/ring_abi_gen.h is stale: run go generate ./gpu/ring and commit it")
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"TypeID": "type_id", "CorrelationID": "correlation_id", "TimestampNS": "timestamp_ns",
		"SlotSize": "slot_size", "TerminatedAck": "terminated_ack", "Head": "head", "LatencyMin": "latency_min",
		"NNZ": "nnz", "RowPtr": "row_ptr",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

package sensor

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/actors"
)

// TestGraphMatchesKernelChain runs the kernel chain (runChain) and the stream
// graph (RunGraph) on the same generated inputs: the output and the
// rejects must be the same bytes (so ids and counts are identical and
// values equal, within 1e-12 and closer), and the counters equal.
func TestGraphMatchesKernelChain(t *testing.T) {
	inputs := []Synthetic{
		DefaultSynthetic(),
		{Rows: 50_000, Sensors: 5, Seed: 9, StartMS: -3_000, StepMS: 2, JitterMS: 900, BadEvery: 300, Header: false},
		{Rows: 20_000, Sensors: 40, Seed: 4, StartMS: 1 << 40, StepMS: 0, JitterMS: 0, BadEvery: 0, Header: true},
	}
	configs := []Config{
		DefaultConfig(),
		{WindowMS: 250, Scale: 1.5, Offset: -3, Streaming: true, LatenessMS: 0},
		{WindowMS: 1000, Scale: 1, Streaming: true, LatenessMS: 150, ChunkBytes: 4096},
		{WindowMS: 7, Scale: -2, Offset: 1e-3, Streaming: true, LatenessMS: 500, RingCapacity: 2, ChunkBytes: 1000},
		{WindowMS: 100, Scale: 1, LimitRejects: true, MaxRejects: 3},
	}
	for i, in := range inputs {
		var data bytes.Buffer
		if err := Generate(&data, in); err != nil {
			t.Fatal(err)
		}
		for j, cfg := range configs {
			var o1, r1, o2, r2 bytes.Buffer
			st1, err1 := runChain(testCtx(t), cfg, bytes.NewReader(data.Bytes()), &o1, &r1, actors.WithLogger(actors.DiscardLogger()))
			st2, err2 := RunGraph(testCtx(t), cfg, bytes.NewReader(data.Bytes()), &o2, &r2,
				GraphOptions{RuntimeOptions: []actors.Option{actors.WithLogger(actors.DiscardLogger())}})
			if errors.Is(err1, ErrTooManyRejects) != errors.Is(err2, ErrTooManyRejects) || (err1 == nil) != (err2 == nil) {
				t.Fatalf("input %d config %d: errors %v and %v", i, j, err1, err2)
			}
			if err1 != nil {
				if !strings.HasPrefix(r2.String(), r1.String()[:strings.LastIndex(r1.String()[:len(r1.String())-1], "\n")+1]) {
					t.Fatalf("input %d config %d: rejects before the limit differ", i, j)
				}
				continue
			}
			if st1 != st2 {
				t.Errorf("input %d config %d: stats %+v and %+v", i, j, st1, st2)
			}
			if !bytes.Equal(o1.Bytes(), o2.Bytes()) {
				t.Errorf("input %d config %d: outputs differ (%d and %d bytes)\n%s", i, j, o1.Len(), o2.Len(), firstDiff(o1.String(), o2.String()))
			}
			if !bytes.Equal(r1.Bytes(), r2.Bytes()) {
				t.Errorf("input %d config %d: rejects differ\n%s", i, j, firstDiff(r1.String(), r2.String()))
			}
			if st1.Windows == 0 || (cfg.Streaming && cfg.LatenessMS == 0 && in.JitterMS > 0 && st1.Late == 0) {
				t.Errorf("input %d config %d: %+v proves little", i, j, st1)
			}
		}
	}
}

// TestChannelsBaselineMatches: the channel baseline of the benchmark
// produces the same output as Run.
func TestChannelsBaselineMatches(t *testing.T) {
	var data bytes.Buffer
	if err := Generate(&data, DefaultSynthetic()); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{DefaultConfig(), {WindowMS: 500, Scale: 2, Streaming: true, LatenessMS: 100}} {
		var o1, r1, o2, r2 bytes.Buffer
		st1, err1 := Run(testCtx(t), cfg, bytes.NewReader(data.Bytes()), &o1, &r1, actors.WithLogger(actors.DiscardLogger()))
		st2, err2 := RunChannels(testCtx(t), cfg, bytes.NewReader(data.Bytes()), &o2, &r2)
		if err1 != nil || err2 != nil || st1 != st2 || o1.String() != o2.String() || r1.String() != r2.String() {
			t.Fatalf("%+v: %v %v\n%+v\n%+v", cfg, err1, err2, st1, st2)
		}
	}
}

package bench

import (
	"context"
	"encoding/json"
	"testing"
)

// tiny is a configuration that runs in a moment, also under the race
// detector: small compute sizes instead of 10M and 1024.
var tiny = Config{RTTSamples: 500, PipelinedMsgs: 2000, InFlight: 8, WarmupRequests: 100,
	ExecSamples: 500, ElementwiseLen: 4096, ElementwiseSamples: 3, MatMulN: 32, MatMulSamples: 3}

func TestRunSmall(t *testing.T) {
	res, err := Run(context.Background(), tiny)
	if err != nil {
		t.Fatal(err)
	}
	if res.RingRTTP50 <= 0 || res.ProtoActorRTTP50 <= 0 || res.ChanRTTP50 <= 0 || res.RingPipelinedMsgsPerS <= 0 || res.ChanPipelinedMsgsPerS <= 0 {
		t.Fatalf("missing measurement: %+v", res)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	// Every compute key is there, and above zero: even the overhead, since
	// an Execute does much more than the direct call it is compared with.
	for _, key := range append([]string{
		"execute_add_tiny_p50_ns", "direct_add_tiny_p50_ns", "execute_overhead_ns",
		"executions_per_s", "execute_allocs_per_call",
		"elementwise_len", "execute_add_10m_f32_ns", "copy_10m_f32_ns", "elementwise_10m_f32_ratio_vs_copy",
		"matmul_n", "execute_matmul_1024_f64_ns", "gonum_gemm_1024_f64_ns", "matmul_1024_f64_ratio_vs_gonum",
		"stream_rows_per_s", "chan_stream_rows_per_s", "stream_ratio_vs_chan",
	}, cpuKeys()...) {
		v, ok := m[key]
		if !ok {
			t.Errorf("JSON lacks %q: %s", key, raw)
			continue
		}
		if f, ok := v.(float64); !ok || f <= 0 {
			t.Errorf("%s = %v, want a number > 0", key, v)
		}
	}
	if res.ElementwiseLen != tiny.ElementwiseLen || res.MatMulN != tiny.MatMulN {
		t.Errorf("sizes %d, %d, want the config's %d, %d", res.ElementwiseLen, res.MatMulN, tiny.ElementwiseLen, tiny.MatMulN)
	}
	if res.ExecuteOverhead != res.ExecuteAddTinyP50-res.DirectAddTinyP50 {
		t.Errorf("overhead %d != %d − %d", res.ExecuteOverhead, res.ExecuteAddTinyP50, res.DirectAddTinyP50)
	}
}

// cpuKeys are the stream measure's CPU-time keys where the platform
// reports CPU time.
func cpuKeys() []string {
	if processCPU() <= 0 {
		return nil
	}
	return []string{"stream_cpu_ns_per_row", "chan_stream_cpu_ns_per_row", "stream_cpu_ratio_vs_chan"}
}

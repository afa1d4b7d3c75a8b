package stream

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ringactor/ringactor/actors"
)

// TestStageTelemetry reads the per-stage instruments from the runtime's
// meter with the SDK's manual reader.
func TestStageTelemetry(t *testing.T) {
	ctx := testCtx(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(true), actors.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	g := New(WithRuntime(rt))
	src := NewSource[word](g, "in").EventTime(func(w word) int64 { return w.TS }, 0)
	dup := FlatMap(g, "dup", func(w word, out *Emitter[word]) error {
		out.Emit(w)
		out.Emit(w)
		return nil
	})
	out, ch := ToChan[word](g, "out", 100)
	Connect(src, dup)
	Connect(dup, out)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := src.Send(ctx, word{W: "x", TS: int64(i) + 1_000}); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		<-ch
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var pts []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				pts = d.DataPoints
			case metricdata.Gauge[int64]:
				pts = d.DataPoints
			}
			for _, p := range pts {
				if st, ok := p.Attributes.Value(attribute.Key(AttrStage)); ok {
					got[m.Name+"/"+st.AsString()] = p.Value
				}
			}
		}
	}
	for key, want := range map[string]int64{StageIn + "/dup": 10, StageOut + "/dup": 20, StageIn + "/out": 20, StageFailed + "/dup": 0, StageLate + "/dup": 0} {
		if got[key] != want {
			t.Errorf("%s = %d, want %d (all: %v)", key, got[key], want, got)
		}
	}
	// Event time is 1 s after the Unix epoch: the watermark lags by decades.
	if lag := got[StageWatermarkLag+"/dup"]; lag < 1e12 {
		t.Errorf("watermark lag of dup = %d ms", lag)
	}
	if _, ok := got[StageDepth+"/dup"]; !ok {
		t.Errorf("no depth for dup: %v", got)
	}
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

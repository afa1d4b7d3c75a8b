package actors

import (
	"context"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/nvml"
)

// fakeMonitor stands for NVML on this machine without a GPU: it reports
// devs and publishes their used memory as nvml.GaugeMemoryUsed.
type fakeMonitor struct {
	devs   []nvml.DeviceStats
	closed atomic.Int32
}

func (f *fakeMonitor) Devices() ([]nvml.DeviceStats, error) { return f.devs, nil }
func (f *fakeMonitor) Close() error                         { f.closed.Add(1); return nil }
func (f *fakeMonitor) RegisterGauges(m metric.Meter) (metric.Registration, error) {
	g, err := m.Int64ObservableGauge(nvml.GaugeMemoryUsed)
	if err != nil {
		return nil, err
	}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, d := range f.devs {
			o.ObserveInt64(g, d.MemoryUsed, metric.WithAttributes(attribute.Int(nvml.AttrDevice, d.Index)))
		}
		return nil
	}, g)
}

func collectNames(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

func TestRuntimeRegistersDeviceGauges(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	mon := &fakeMonitor{devs: []nvml.DeviceStats{{Index: 0, Name: "fake", MemoryUsed: 1234, MemoryTotal: 8192}}}
	rt, err := NewRuntime(WithLogger(DiscardLogger()), WithMeterProvider(mp),
		WithDeviceMonitor(func() (DeviceMonitor, error) { return mon, nil }))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := collectNames(t, reader)[nvml.GaugeMemoryUsed].(metricdata.Gauge[int64])
	if !ok || len(g.DataPoints) != 1 || g.DataPoints[0].Value != 1234 {
		t.Errorf("%s = %+v, want one device at 1234", nvml.GaugeMemoryUsed, g)
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if mon.closed.Load() != 1 {
		t.Errorf("monitor closed %d times, want 1", mon.closed.Load())
	}
	if _, ok := collectNames(t, reader)[nvml.GaugeMemoryUsed]; ok {
		t.Error("device gauges still observed after Close")
	}
}

func TestRuntimeWithoutDeviceHasNoDeviceGauges(t *testing.T) {
	for name, open := range map[string]func() (DeviceMonitor, error){
		"no device": func() (DeviceMonitor, error) { return &fakeMonitor{}, nil },
		"no driver": func() (DeviceMonitor, error) {
			return nil, &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: nvml.Backend, Reason: "no library"}
		},
		"real NVML": nil, // the default: NVML on this machine (none in CI)
	} {
		t.Run(name, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			defer func() { _ = mp.Shutdown(context.Background()) }()
			opts := []Option{WithLogger(DiscardLogger()), WithMeterProvider(mp)}
			if open != nil {
				opts = append(opts, WithDeviceMonitor(open))
			}
			rt, err := NewRuntime(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = rt.Close(context.Background()) }()
			if _, err := nvml.Snapshot(); open == nil && err == nil {
				return // a GPU machine: the default registers the gauges
			}
			if _, ok := collectNames(t, reader)[nvml.GaugeMemoryUsed]; ok {
				t.Error("device gauges without a device")
			}
			if rt.devices != nil {
				t.Error("the runtime holds a device monitor without a device")
			}
		})
	}
}

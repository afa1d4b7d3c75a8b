//go:build linux && cgo

package nvml

import (
	"context"
	"errors"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/ringactor/ringactor/gpu"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestFailedInitCallsNothingElse uses go-nvml's mock, whose methods panic
// when called without a function set: only Init is set, so any other call
// after the failed Init would panic the test.
func TestFailedInitCallsNothingElse(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() gonvml.Return { return gonvml.ERROR_DRIVER_NOT_LOADED }}
	m, err := openWith(lib, DefaultLibrary)
	if m != nil || !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("openWith: %v, %v", m, err)
	}
	if !strings.Contains(err.Error(), "NVML_ERROR_DRIVER_NOT_LOADED") {
		t.Fatalf("error %q lacks the NVML error name", err)
	}
	if n := len(lib.InitCalls()); n != 1 {
		t.Fatalf("Init called %d times", n)
	}
}

func TestInitPanicIsRecovered(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() gonvml.Return { panic("no symbol nvmlInit_v2") }}
	m, err := openWith(lib, DefaultLibrary)
	if m != nil || !errors.Is(err, gpu.ErrDeviceNotAvailable) || !strings.Contains(err.Error(), "no symbol nvmlInit_v2") {
		t.Fatalf("openWith: %v, %v", m, err)
	}
}

func fakeNVML() *mock.Interface {
	devs := []*mock.Device{
		{
			GetNameFunc: func() (string, gonvml.Return) { return "NVIDIA H100 80GB HBM3", gonvml.SUCCESS },
			GetMemoryInfoFunc: func() (gonvml.Memory, gonvml.Return) {
				return gonvml.Memory{Total: 80 << 30, Used: 1 << 30}, gonvml.SUCCESS
			},
			GetUtilizationRatesFunc: func() (gonvml.Utilization, gonvml.Return) {
				return gonvml.Utilization{Gpu: 97}, gonvml.SUCCESS
			},
			GetTemperatureFunc: func(gonvml.TemperatureSensors) (uint32, gonvml.Return) { return 61, gonvml.SUCCESS },
			GetPowerUsageFunc:  func() (uint32, gonvml.Return) { return 350000, gonvml.SUCCESS },
			GetComputeModeFunc: func() (gonvml.ComputeMode, gonvml.Return) {
				return gonvml.COMPUTEMODE_EXCLUSIVE_PROCESS, gonvml.SUCCESS
			},
			GetMigModeFunc: func() (int, int, gonvml.Return) { return 0, 0, gonvml.ERROR_NOT_SUPPORTED },
		},
		{ // a MIG-like device: no utilisation or power readings
			GetNameFunc:       func() (string, gonvml.Return) { return "NVIDIA A100", gonvml.SUCCESS },
			GetMemoryInfoFunc: func() (gonvml.Memory, gonvml.Return) { return gonvml.Memory{Total: 40 << 30, Used: 0}, gonvml.SUCCESS },
			GetUtilizationRatesFunc: func() (gonvml.Utilization, gonvml.Return) {
				return gonvml.Utilization{}, gonvml.ERROR_NOT_SUPPORTED
			},
			GetTemperatureFunc: func(gonvml.TemperatureSensors) (uint32, gonvml.Return) { return 40, gonvml.SUCCESS },
			GetPowerUsageFunc:  func() (uint32, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED },
			GetComputeModeFunc: func() (gonvml.ComputeMode, gonvml.Return) { return gonvml.COMPUTEMODE_DEFAULT, gonvml.SUCCESS },
			GetMigModeFunc: func() (int, int, gonvml.Return) {
				return gonvml.DEVICE_MIG_ENABLE, gonvml.DEVICE_MIG_ENABLE, gonvml.SUCCESS
			},
		},
	}
	return &mock.Interface{
		InitFunc:           func() gonvml.Return { return gonvml.SUCCESS },
		ShutdownFunc:       func() gonvml.Return { return gonvml.SUCCESS },
		DeviceGetCountFunc: func() (int, gonvml.Return) { return len(devs), gonvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (gonvml.Device, gonvml.Return) {
			return devs[i], gonvml.SUCCESS
		},
	}
}

func TestDevicesAndGauges(t *testing.T) {
	lib := fakeNVML()
	m, err := openWith(lib, DefaultLibrary)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := m.Devices()
	if err != nil {
		t.Fatal(err)
	}
	want := []DeviceStats{
		{0, "NVIDIA H100 80GB HBM3", 80 << 30, 1 << 30, 97, 61, 350000, "exclusive_process", ""},
		{1, "NVIDIA A100", 40 << 30, 0, -1, 40, -1, "default", "enabled"},
	}
	if len(stats) != len(want) || stats[0] != want[0] || stats[1] != want[1] {
		t.Fatalf("Devices() = %+v, want %+v", stats, want)
	}

	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = provider.Shutdown(context.Background()) }()
	reg, err := m.RegisterGauges(provider.Meter("test"))
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, reader)
	wantPoints := map[string]int64{
		GaugeMemoryUsed + "/0": 1 << 30, GaugeMemoryTotal + "/0": 80 << 30, GaugeUtilization + "/0": 97,
		GaugeTemperature + "/0": 61, GaugePower + "/0": 350000,
		GaugeMemoryUsed + "/1": 0, GaugeMemoryTotal + "/1": 40 << 30, GaugeTemperature + "/1": 40,
	}
	if len(got) != len(wantPoints) {
		t.Fatalf("collected %v, want %v", got, wantPoints)
	}
	for k, v := range wantPoints {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(lib.ShutdownCalls()); n != 1 {
		t.Fatalf("Shutdown called %d times", n)
	}
	if _, err := m.Devices(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Devices after Close: %v", err)
	}
	if got := collect(t, reader); len(got) != 0 {
		t.Fatalf("collected after Close: %v", got)
	}
	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
}

// collect returns "gauge/device" -> value, checking the device name
// attribute is present on every point.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			g, ok := mt.Data.(metricdata.Gauge[int64])
			if !ok {
				t.Fatalf("%s is %T, want an int64 gauge", mt.Name, mt.Data)
			}
			for _, p := range g.DataPoints {
				idx, ok1 := p.Attributes.Value(attribute.Key(AttrDevice))
				name, ok2 := p.Attributes.Value(attribute.Key(AttrDeviceName))
				if !ok1 || !ok2 || name.AsString() == "" {
					t.Fatalf("%s point lacks device attributes: %v", mt.Name, p.Attributes)
				}
				out[mt.Name+"/"+idx.String()] = p.Value
			}
		}
	}
	return out
}

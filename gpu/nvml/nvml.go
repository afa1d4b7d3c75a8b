// Package nvml reports NVIDIA device telemetry (memory, utilisation,
// temperature, power) through github.com/NVIDIA/go-nvml and publishes it as
// OpenTelemetry gauges.
//
// NVML is optional: on a machine without the NVIDIA driver's
// libnvidia-ml.so.1, [Open] returns an error that says so and nothing else
// in NVML is ever called (go-nvml resolves symbols lazily, and calling an
// unresolved one kills the process). The environment variable
// RINGACTOR_NVML_LIBRARY, when set, names the library to load instead.
package nvml

import (
	"context"
	"errors"
	"os"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Backend is the name used in the *gpu.DeviceError this package returns.
const Backend = "nvml"

// LibraryEnv names the environment variable that overrides the library to
// load (default [DefaultLibrary]).
const LibraryEnv = "RINGACTOR_NVML_LIBRARY"

// DefaultLibrary is the soname of the NVML library.
const DefaultLibrary = "libnvidia-ml.so.1"

// ErrClosed is returned by [Monitor.Devices] after [Monitor.Close].
var ErrClosed = errors.New("nvml: monitor closed")

// Instrument names of [Monitor.RegisterGauges].
const (
	GaugeMemoryUsed  = "ringactor.gpu.memory.used"  // bytes of device memory in use
	GaugeMemoryTotal = "ringactor.gpu.memory.total" // bytes of device memory
	GaugeUtilization = "ringactor.gpu.utilization"  // percent of time a kernel ran, last sample period
	GaugeTemperature = "ringactor.gpu.temperature"  // GPU die temperature, °C
	GaugePower       = "ringactor.gpu.power"        // board power draw, milliwatts
)

// Attribute keys of the gauges.
const (
	AttrDevice     = "device"      // the NVML device index (int)
	AttrDeviceName = "device_name" // the device's name
)

// DeviceStats is one reading of one device. A reading the device does not
// support (or that failed) is -1.
type DeviceStats struct {
	Index           int    // NVML device index
	Name            string // e.g. "NVIDIA H100 80GB HBM3"
	MemoryTotal     int64  // bytes
	MemoryUsed      int64  // bytes
	UtilizationGPU  int64  // percent
	TemperatureC    int64  // degrees Celsius
	PowerMilliwatts int64  // milliwatts
	// ComputeMode is the device's compute mode: "default",
	// "exclusive_process" or "prohibited" ("" when NVML does not say).
	ComputeMode string
	// MIG is the device's current MIG mode: "enabled", "disabled" ("" when
	// NVML does not say, as on devices without MIG).
	MIG string
}

// source is what a Monitor reads: go-nvml, or a fake in tests.
type source interface {
	devices() ([]DeviceStats, error)
	shutdown() error
}

// Monitor reads NVML device telemetry. Its methods are safe for concurrent
// use.
type Monitor struct {
	mu  sync.Mutex
	src source // nil after Close
}

// Open loads NVML ($RINGACTOR_NVML_LIBRARY or libnvidia-ml.so.1) and calls
// nvmlInit. Failures are *gpu.DeviceError of kind gpu.DeviceUnavailable,
// backend "nvml", with the reason (library not found and dlopen's message,
// or nvmlInit's error); after one, nothing else in NVML is called.
func Open() (*Monitor, error) { return open(libraryPath()) }

// Snapshot opens NVML, reads every device and closes it again: a one-off
// listing such as the CLI's. Open's error says why NVML is unusable.
func Snapshot() ([]DeviceStats, error) {
	m, err := Open()
	if err != nil {
		return nil, err
	}
	stats, err := m.Devices()
	return stats, errors.Join(err, m.Close())
}

func libraryPath() string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return p
	}
	return DefaultLibrary
}

// Devices reads every device.
func (m *Monitor) Devices() ([]DeviceStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.src == nil {
		return nil, ErrClosed
	}
	return m.src.devices()
}

// Close calls nvmlShutdown once; later calls return nil.
func (m *Monitor) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.src == nil {
		return nil
	}
	err := m.src.shutdown()
	m.src = nil
	return err
}

// RegisterGauges registers the observable gauges GaugeMemoryUsed,
// GaugeMemoryTotal, GaugeUtilization, GaugeTemperature and GaugePower on
// meter, each observed per device with attributes AttrDevice and
// AttrDeviceName; readings a device does not support are not observed. One
// callback reads all devices once per collection. Unregister the returned
// registration before Close; after Close the callback observes nothing.
func (m *Monitor) RegisterGauges(meter metric.Meter) (metric.Registration, error) {
	used, err := meter.Int64ObservableGauge(GaugeMemoryUsed, metric.WithUnit("By"),
		metric.WithDescription("Device memory in use."))
	if err != nil {
		return nil, err
	}
	total, err := meter.Int64ObservableGauge(GaugeMemoryTotal, metric.WithUnit("By"),
		metric.WithDescription("Device memory."))
	if err != nil {
		return nil, err
	}
	util, err := meter.Int64ObservableGauge(GaugeUtilization, metric.WithUnit("%"),
		metric.WithDescription("Percent of the last sample period in which a kernel ran on the device."))
	if err != nil {
		return nil, err
	}
	temp, err := meter.Int64ObservableGauge(GaugeTemperature, metric.WithUnit("Cel"),
		metric.WithDescription("GPU temperature."))
	if err != nil {
		return nil, err
	}
	power, err := meter.Int64ObservableGauge(GaugePower, metric.WithUnit("mW"),
		metric.WithDescription("Board power draw."))
	if err != nil {
		return nil, err
	}
	return meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		stats, err := m.Devices()
		if errors.Is(err, ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, s := range stats {
			attrs := metric.WithAttributeSet(attribute.NewSet(
				attribute.Int(AttrDevice, s.Index), attribute.String(AttrDeviceName, s.Name)))
			for _, r := range []struct {
				g metric.Int64ObservableGauge
				v int64
			}{{used, s.MemoryUsed}, {total, s.MemoryTotal}, {util, s.UtilizationGPU}, {temp, s.TemperatureC}, {power, s.PowerMilliwatts}} {
				if r.v >= 0 {
					o.ObserveInt64(r.g, r.v, attrs)
				}
			}
		}
		return nil
	}, used, total, util, temp, power)
}

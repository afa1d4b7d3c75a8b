package actors

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/metric"

	"github.com/ringactor/ringactor/gpu/nvml"
)

// DeviceMonitor reads device telemetry and publishes it as OpenTelemetry
// gauges; *nvml.Monitor is one.
type DeviceMonitor interface {
	// Devices reads every device.
	Devices() ([]nvml.DeviceStats, error)
	// RegisterGauges registers the device gauges on meter.
	RegisterGauges(meter metric.Meter) (metric.Registration, error)
	// Close releases the monitor.
	Close() error
}

// WithDeviceMonitor sets how a runtime with telemetry on opens its device
// monitor (default: NVML, nvml.Open). When it opens and reports at least
// one device, the runtime registers the monitor's gauges (memory,
// utilisation, temperature, power; see package nvml) on its meter and
// unregisters and closes them in Close; when it fails (no driver, no
// device) the runtime has no device gauges. A nil open turns device
// gauges off.
func WithDeviceMonitor(open func() (DeviceMonitor, error)) Option {
	return func(c *runtimeConfig) { c.deviceMonitor, c.deviceMonitorSet = open, true }
}

// openNVML is the default device monitor.
func openNVML() (DeviceMonitor, error) {
	m, err := nvml.Open()
	if err != nil {
		return nil, err
	}
	return m, nil
}

// deviceGauges are a runtime's registered device gauges.
type deviceGauges struct {
	mon DeviceMonitor
	reg metric.Registration
}

// startDeviceGauges opens the device monitor and registers its gauges on
// meter when it reports a device; it returns nil (and logs at debug level
// why) when there is none.
func (rt *Runtime) startDeviceGauges(open func() (DeviceMonitor, error), meter metric.Meter) *deviceGauges {
	if open == nil {
		return nil
	}
	mon, err := open()
	if err != nil {
		rt.logger.Debug("ringactor: no device gauges", "error", err)
		return nil
	}
	devs, err := mon.Devices()
	if err == nil && len(devs) == 0 {
		err = errors.New("no device")
	}
	var reg metric.Registration
	if err == nil {
		reg, err = mon.RegisterGauges(meter)
	}
	if err != nil {
		rt.logger.Debug("ringactor: no device gauges", "error", errors.Join(err, mon.Close()))
		return nil
	}
	rt.logger.Debug("ringactor: device gauges registered", "devices", len(devs))
	return &deviceGauges{mon: mon, reg: reg}
}

// close unregisters the gauges and closes the monitor.
func (g *deviceGauges) close() error {
	if g == nil {
		return nil
	}
	var errs []error
	if err := g.reg.Unregister(); err != nil {
		errs = append(errs, fmt.Errorf("unregistering device gauges: %w", err))
	}
	if err := g.mon.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the device monitor: %w", err))
	}
	return errors.Join(errs...)
}

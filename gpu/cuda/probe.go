package cuda

import (
	"fmt"
	"strings"
)

// Report is what [Probe] found out about the CUDA driver and devices.
type Report struct {
	LibraryLoaded bool         // the driver library was loaded and has every entry point used
	LibraryPath   string       // the file it was loaded from
	DriverVersion int          // cuDriverGetVersion: 1000*major + 10*minor; 0 if unknown
	Devices       []DeviceInfo // the usable devices
	Err           error        // why no device is usable (gpu.DeviceUnavailable); nil if Devices is not empty
}

// DeviceInfo describes one device.
type DeviceInfo struct {
	Index             int               // the device ordinal
	Name              string            // cuDeviceGetName
	TotalMem          uint64            // bytes
	ComputeCapability ComputeCapability // SM version
	KernelExecTimeout bool              // a watchdog limits kernel run time (display GPU); persistent kernels must not be used
	SMs               int               // multiprocessor count
	CanMapHostMemory  bool              // cuMemHostAlloc(DEVICEMAP) memory can be mapped
	UnifiedAddressing bool              // host and device share one address space
}

// DriverVersionString formats DriverVersion as "12.2" ("" when unknown).
func (r Report) DriverVersionString() string {
	if r.DriverVersion <= 0 {
		return ""
	}
	return versionString(r.DriverVersion)
}

// String summarises the report on one line per device.
func (r Report) String() string {
	var b strings.Builder
	if !r.LibraryLoaded {
		fmt.Fprintf(&b, "cuda: %v", r.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "cuda: %s (CUDA %s)", r.LibraryPath, r.DriverVersionString())
	if r.Err != nil {
		fmt.Fprintf(&b, ": %v", r.Err)
	}
	for _, d := range r.Devices {
		fmt.Fprintf(&b, "\n  device %d: %s, sm_%d%d, %d SMs, %d MiB", d.Index, d.Name,
			d.ComputeCapability.Major, d.ComputeCapability.Minor, d.SMs, d.TotalMem>>20)
		if d.KernelExecTimeout {
			b.WriteString(", kernel exec timeout")
		}
	}
	return b.String()
}

// Probe loads the driver (as [Load] does) and lists its devices. It never
// panics; without a usable device Report.Err is a *gpu.DeviceError of kind
// gpu.DeviceUnavailable that says why.
func Probe() Report { return processLoader().probe() }

func (l *loader) probe() Report {
	var r Report
	drv, err := l.library()
	if err != nil {
		r.Err = err
		return r
	}
	r.LibraryLoaded = true
	r.LibraryPath = drv.Path()
	if v, err := drv.DriverGetVersion(); err == nil {
		r.DriverVersion = v
	}
	if _, err := l.initialized(); err != nil {
		r.Err = err
		return r
	}
	n, err := drv.DeviceGetCount()
	if err != nil {
		r.Err = unavailable(err.Error())
		return r
	}
	var failures []string
	for i := 0; i < n; i++ {
		info, err := drv.DeviceInfo(i)
		if err != nil {
			failures = append(failures, fmt.Sprintf("device %d: %v", i, err))
			continue
		}
		r.Devices = append(r.Devices, info)
	}
	switch {
	case len(r.Devices) > 0:
	case n == 0:
		r.Err = unavailable("cuDeviceGetCount found no device")
	default:
		r.Err = unavailable(strings.Join(failures, "; "))
	}
	return r
}

// DeviceInfo queries device ordinal. The driver must be initialised.
func (d *Driver) DeviceInfo(ordinal int) (DeviceInfo, error) {
	info := DeviceInfo{Index: ordinal}
	dev, err := d.DeviceGet(ordinal)
	if err != nil {
		return info, err
	}
	if info.Name, err = d.DeviceGetName(dev); err != nil {
		return info, err
	}
	if info.TotalMem, err = d.DeviceTotalMem(dev); err != nil {
		return info, err
	}
	attrs := []struct {
		attr DeviceAttribute
		set  func(int)
	}{
		{AttrComputeCapabilityMajor, func(v int) { info.ComputeCapability.Major = v }},
		{AttrComputeCapabilityMinor, func(v int) { info.ComputeCapability.Minor = v }},
		{AttrMultiprocessorCount, func(v int) { info.SMs = v }},
		{AttrKernelExecTimeout, func(v int) { info.KernelExecTimeout = v != 0 }},
		{AttrCanMapHostMemory, func(v int) { info.CanMapHostMemory = v != 0 }},
		{AttrUnifiedAddressing, func(v int) { info.UnifiedAddressing = v != 0 }},
	}
	for _, a := range attrs {
		v, err := d.DeviceGetAttribute(a.attr, dev)
		if err != nil {
			return info, err
		}
		a.set(v)
	}
	return info, nil
}

//go:build !linux || !cgo

package cuda

// ModuleGetLoadingMode reads back the driver's module loading mode. This
// build has no driver binding: it returns the DeviceUnavailable error.
func (d *Driver) ModuleGetLoadingMode() (string, error) { return "", d.err("cuModuleGetLoadingMode") }

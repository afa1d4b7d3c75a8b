//go:build !(linux && cgo)

package multiproc

import "github.com/ringactor/ringactor/gpu"

// simDevices: the simulated device needs cgo on Linux; none here.
func simDevices(int) ([]gpu.Backend, func()) { return nil, func() {} }

// simDevicesBuilt: members have no simulated devices in this build.
const simDevicesBuilt = false

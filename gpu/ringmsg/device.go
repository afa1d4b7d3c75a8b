package ringmsg

import _ "embed" // the device handlers

// DeviceCode is the CUDA C source of the built-in handlers as device ring
// handlers (handlers.cuh): each op's handler is the entry of a device ring
// kernel (actors.NewDeviceKernel), compiled like a user's handler.
//
//go:embed handlers.cuh
var DeviceCode string

// DeviceTypes are values of every message type DeviceCode uses (its
// DeviceSource.Types).
var DeviceTypes = []any{VecMsg{}, UnaryMsg{}, ReduceMsg{}, SpMVMsg{}, VecReply{}, ScalarReply{}, SpMVReply{}}

var entries = map[Op]string{Add: "ringmsg_add", Mul: "ringmsg_multiply", Scale: "ringmsg_scale", ReLU: "ringmsg_relu",
	LeakyReLU: "ringmsg_leaky_relu", Sum: "ringmsg_sum", Min: "ringmsg_min", Max: "ringmsg_max", SpMV: "ringmsg_spmv"}

// DeviceEntry returns the name of o's handler in DeviceCode ("" for an
// unknown op).
func (o Op) DeviceEntry() string { return entries[o] }

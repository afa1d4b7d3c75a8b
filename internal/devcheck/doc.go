// Package devcheck holds the device scenarios of `ringactor selftest`: the
// checks and measurements of the whole GPU path (the driver and device
// report, no driver call blocking beside a live ring, memory visibility
// through mapped memory, one-shot results against gpu/cpu, users' device
// ring kernels byte-equal to their fallbacks, State zeroed after a restart,
// ring round trips, Execute beside a ring, device epochs, idle wake-up, a
// device fault moving kernels to their fallbacks).
//
// The same code runs on the simulated device (simdevice.NewBackend; the
// package's tests and `ringactor selftest --device=sim`) and on a real GPU
// (`ringactor selftest --device`), so nothing is copied for the GPU. Checks
// only the simulator can make (its strict hazard model) are reported as
// skipped, with that reason, on a real device.
//
// Each [Step] is meant to run in a process of its own (a driver call that
// hangs wedges its context): the command re-executes itself for each one;
// [Run] runs one step in the calling process.
package devcheck

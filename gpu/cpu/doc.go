// Package cpu is the CPU backend of ringactor: the built-in Go compute
// kernels and the Backend that runs them. A CPU ring kernel's persistent
// loop is gpu/ring's Loop on a goroutine (spin, yield, then park on a
// Signal, so an idle kernel costs no CPU and a busy one pays no wake-up);
// its old names here are deprecated aliases.
package cpu

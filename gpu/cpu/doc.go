// Package cpu is the CPU backend of ringactor: a ring kernel's persistent
// loop is a goroutine that consumes its input ring under the control block's
// gate, with a wait strategy (spin, then yield, then park on a signal) so an
// idle kernel costs no CPU and a busy one pays no wake-up.
package cpu

// Command apidump writes the module's exported API on record,
// api/ringactor.txt: one line per exported name of every package a user
// can import (not internal/, not examples/, not a main package), in the
// manner of Go's own api/ files:
//
//	pkg github.com/ringactor/ringactor/gpu/ring, func NewRing[T any](int) (*Ring[T], error)
//	pkg github.com/ringactor/ringactor/gpu/ring, type Ring[T any] struct
//	pkg github.com/ringactor/ringactor/gpu/ring, method (*Ring[T]) TryPush(T) bool
//
// An exported alias of a type declared in an internal package (gpu/cuda's
// DevicePtr is gpu/cuda/internal/driverapi's) is written as if the
// package declared the type: its fields and methods are the API users
// reach, through the only name they can import.
//
// Run it from anywhere in the module after an exported change, and commit
// the file's diff with the change:
//
//	go run ./internal/apidump -w
//
// Without -w it prints the API on stdout. Its test fails while the file
// and the code differ, naming the added and removed lines.
//
// The API is read from the compiler's export data (go list -export), so
// cgo packages need no special handling; it is the API of a build for the
// host with cgo on (the production build on linux).
package main

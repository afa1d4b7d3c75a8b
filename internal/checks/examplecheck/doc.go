// Package examplecheck holds a test of the module's godoc examples: they
// are what users copy, so none of them drops an error.
package examplecheck

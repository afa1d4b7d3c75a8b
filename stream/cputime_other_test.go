//go:build !unix

package stream

import "time"

// processCPU is zero where the platform does not report CPU time.
func processCPU() time.Duration { return 0 }

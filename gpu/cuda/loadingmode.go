package cuda

import (
	"errors"
	"fmt"
)

// ErrNoLoadingMode says the driver predates cuModuleGetLoadingMode (CUDA
// 12.0): its modules load eagerly.
var ErrNoLoadingMode = errors.New("cuda: the driver has no cuModuleGetLoadingMode (before CUDA 12.0: modules load eagerly)")

// loadingModeName names a CUmoduleLoadingMode value.
func loadingModeName(mode int) string {
	switch mode {
	case 1:
		return "EAGER"
	case 2:
		return "LAZY"
	}
	return fmt.Sprintf("mode %d", mode)
}

// C mirrors of the Go structs that host and device share in mapped pinned
// memory: the control block and the ring protocol's headers and constants,
// generated from gpu/ring's Go types into kernels/ring_abi_gen.h (go
// generate ./gpu/ring), with static assertions of every size and offset.
// hostsim's layout test compares every generated struct (the header's
// RC_ABI_LAYOUT table) with its Go type again in go test.

#ifndef RINGACTOR_CUDA_ABI_H
#define RINGACTOR_CUDA_ABI_H

#include "kernels/ring_abi_gen.h"

#endif

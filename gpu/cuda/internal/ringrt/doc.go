// Package ringrt is the device ring runtime of the CUDA backend: ring
// programs (ProgramSpec, ProgramSource: generation from the loop
// templates of gpu/cuda/kernels; Program: compilation, its process-wide
// cache, module load), ring kernels (Kernel: a persistent kernel's
// control block and rings in the pinned arena, Config, faults, the park
// and relaunch of device epochs), program grids and their mailbox tables
// (StartGrid, Open, MailboxStats), and the device epoch as a call
// (Epoch, EpochStats). A Runtime works on one open device of package
// gpu/cuda/internal/devcore; package gpu/cuda makes one per backend and
// forwards its ring methods (LoadRingProgram, LaunchRingProgram,
// OpenMailbox, StartRingGrid, DeviceEpoch…) to it, with its types as
// aliases (cuda.RingKernel is ringrt.Kernel), so users keep using
// gpu/cuda.
//
// On the simulated device (gpu/cuda/simdevice) programs run from their
// host build (HostPrograms); this package links no simulator.
package ringrt

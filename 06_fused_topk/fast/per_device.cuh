// fast/per_device.cuh — the launches' host-side caches, one entry a device.
//
// What it does: what a launch asks the runtime once is kept per device ordinal.
// Assumes: ordinals below FAST_MAX_DEVICES (past them: die).
// Read next: fast.cu, the variants and how fast picks a kernel.
#ifndef FAST_PER_DEVICE_CUH
#define FAST_PER_DEVICE_CUH

#include "../../common/check.h"

#define FAST_MAX_DEVICES 64

// The current device's ordinal.
static int fast_device(void)
{
    int device;
    CUDA_CHECK(cudaGetDevice(&device));
    if (device < 0 || device >= FAST_MAX_DEVICES)
        die(1, "fast kernels: device %d is past the %d they keep state for", device, FAST_MAX_DEVICES);
    return device;
}

#endif

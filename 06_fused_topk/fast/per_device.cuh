// fast/per_device.cuh — host-side caches keep one entry a device.
// Assumes: ordinals below FAST_MAX_DEVICES.
// Read next: fast.cu.
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

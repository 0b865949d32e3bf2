// fast/dependent_launch.cuh — programmatic dependent launch (sm_90): a grid placed before the
// one ahead ends. Invariant: no global access before the wait.
// Read next: per_device.cuh.
#ifndef FAST_DEPENDENT_LAUNCH_CUH
#define FAST_DEPENDENT_LAUNCH_CUH

// Waits for the grid ahead, then lets the next be placed.
__device__ __forceinline__ void wait_for_launch_ahead(void)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Adds the attribute if `dependent`; returns the count added.
static unsigned dependent_launch_attribute(cudaLaunchAttribute *attribute, bool dependent)
{
    if (!dependent)
        return 0;
    attribute->id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute->val.programmaticStreamSerializationAllowed = 1;
    return 1;
}

#endif

// fast/dependent_launch.cuh — programmatic dependent launch (sm_90): a kernel that starts before
// the one ahead of it in the stream has finished.
//
// What it saves: in a decode loop every token's top-K is a launch of its own, and between two
// launches the GPU drains the first grid before it starts placing the second's blocks. Launched
// with cudaLaunchAttributeProgrammaticStreamSerialization, the second grid's blocks may be placed
// as soon as every block of the first has signalled (griddepcontrol.launch_dependents, which the
// runtime calls cudaTriggerProgrammaticLaunchCompletion) or exited; they then stop at
// griddepcontrol.wait (cudaGridDependencySynchronize) until the first grid has finished and its
// writes are visible. Launched without the attribute, both instructions do nothing.
// The invariant each kernel keeps: nothing it reads or writes in global memory comes before the
// wait, because the grid ahead may still be writing it (in a server, the logits are the output of
// the launch ahead). Where the signal goes decides only how early the next grid is placed. Here it
// comes right after the wait, so at most one grid waits behind the running one. And the grid behind
// is placed only once this grid's own predecessor has finished, since the signal follows the wait.
// In the decode loop (decode_loop.c) every token reads its own
// row and writes its own K entries, so no two launches touch the same bytes at all; the wait is
// there for the loop a server runs.
// Assumes: kernels built for sm_90 or newer use it (fast_pdl_available() checks the build).
// Read next: per_device.cuh, the launches' caches.
#ifndef FAST_DEPENDENT_LAUNCH_CUH
#define FAST_DEPENDENT_LAUNCH_CUH

// Waits for the grid ahead to finish (a launch without the attribute: returns at once), then lets
// the grid behind be placed.
__device__ __forceinline__ void wait_for_launch_ahead(void)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Adds the attribute to a launch's list when `dependent`; returns how many attributes it added.
static unsigned dependent_launch_attribute(cudaLaunchAttribute *attribute, bool dependent)
{
    if (!dependent)
        return 0;
    attribute->id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute->val.programmaticStreamSerializationAllowed = 1;
    return 1;
}

#endif

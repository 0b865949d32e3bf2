/* The GPU half of the harness: the ceilings every row is compared with must be real bandwidths. */
#include "gpu_test.h"

/* A ceiling above the DRAM's theoretical rate means the timing or the byte count is wrong; one far
 * below it means the measurement is not saturating the memory (or the L2 flush leaked into it). */
Test(gpu, ceilings_lie_between_a_third_of_theoretical_and_theoretical)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    const double copy = gpu_copy_ceiling_gbps(), read = gpu_read_ceiling_gbps();
    cr_expect(copy > gpu.dram_theoretical_gbps / 3 && copy <= gpu.dram_theoretical_gbps,
              "copy ceiling %.0f GB/s, theoretical %.0f GB/s", copy, gpu.dram_theoretical_gbps);
    cr_expect(read > gpu.dram_theoretical_gbps / 3 && read <= gpu.dram_theoretical_gbps,
              "read ceiling %.0f GB/s, theoretical %.0f GB/s", read, gpu.dram_theoretical_gbps);
}

Test(gpu, grid_size_covers_small_n_and_caps_large_n)
{
    gpu_info gpu;
    open_gpu_or_skip(&gpu);
    cr_expect_eq(gpu_grid_size(1, 256, 8), 1);
    cr_expect_eq(gpu_grid_size(257, 256, 8), 2);
    cr_expect_eq(gpu_grid_size((size_t)1 << 40, 256, 8), gpu.sms * 8);
}

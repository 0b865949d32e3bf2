#include "cudnn_softmax.h"

#ifdef HAVE_CUDNN /* the whole file: without cuDNN there is nothing to build */
#include <cudnn.h>
#include <stdint.h>

#include "../common/check.h"

#define CUDNN_CHECK(call) cudnn_check((call), #call, __FILE__, __LINE__)

static void cudnn_check(cudnnStatus_t status, const char *what, const char *file, int line)
{
    if (status != CUDNN_STATUS_SUCCESS)
        die(1, "%s:%d: cuDNN error in %s: %s", file, line, what, cudnnGetErrorString(status));
}

/* One handle and one descriptor for the whole run, made on first use (the warm-up runs pay for
 * it, the timed runs do not). The descriptor is reset only when the shape changes. */
static struct {
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t desc;
    size_t rows, cols;
} lib;

static int cudnn_softmax(const float *x, float *y, size_t rows, size_t cols, void *workspace)
{
    (void)workspace;
    if (!lib.handle) {
        CUDNN_CHECK(cudnnCreate(&lib.handle));
        CUDNN_CHECK(cudnnCreateTensorDescriptor(&lib.desc));
    }
    if (rows != lib.rows || cols != lib.cols) {
        CUDNN_CHECK(cudnnSetTensor4dDescriptor(lib.desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)rows,
                                               (int)cols, 1, 1));
        lib.rows = rows;
        lib.cols = cols;
    }
    const float one = 1.0f, zero = 0.0f;
    CUDNN_CHECK(cudnnSoftmaxForward(lib.handle, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one,
                                    lib.desc, x, &zero, lib.desc, y));
    CUDA_CHECK(cudaGetLastError());
    return 0; /* a library call: its kernel launches are its own business */
}

/* Its tensor descriptor's dimensions are ints. */
static bool cudnn_fits(size_t rows, size_t cols) { return rows <= INT32_MAX && cols <= INT32_MAX; }

/* cuDNN reads x and writes y; how often it reads x is not ours to know, so bytes/elem says 8. */
const softmax_variant cudnn_variant = {"cudnn", 8.0, NULL, cudnn_softmax, cudnn_fits,
                                       "at most 2147483647 rows and 2147483647 columns", true};
#endif

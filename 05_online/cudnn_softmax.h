/* cuDNN's softmax as a variant, so stages can measure the library in the same run. Built only
 * when the build finds cuDNN (HAVE_CUDNN); without it the stages say so and leave its rows out. */
#ifndef ONLINE_CUDNN_SOFTMAX_H
#define ONLINE_CUDNN_SOFTMAX_H

#include "../common/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef HAVE_CUDNN
/* cudnnSoftmaxForward, CUDNN_SOFTMAX_ACCURATE (max subtracted), CUDNN_SOFTMAX_MODE_INSTANCE (one
 * softmax per row), float32, the matrix described as N = rows, C = cols, H = W = 1. */
extern const softmax_variant cudnn_variant;
#endif

#ifdef __cplusplus
}
#endif
#endif

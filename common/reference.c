#include "reference.h"

#include <math.h>

void reference_softmax(const float *x, double *y, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        double *yr = y + r * cols;
        double max = -INFINITY;
        for (size_t c = 0; c < cols; c++)
            max = fmax(max, (double)xr[c]);
        double sum = 0.0;
        for (size_t c = 0; c < cols; c++) {
            yr[c] = exp((double)xr[c] - max);
            sum += yr[c];
        }
        for (size_t c = 0; c < cols; c++)
            yr[c] /= sum;
    }
}

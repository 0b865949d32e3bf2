#include "row_order.h"

#include <stdlib.h>
#include <string.h>

#include "../../common/host_threads.h"

static const char *const names[] = {"index", "ascending"};

int row_order_from_name(const char *name, row_order *order)
{
    for (int o = 0; o < 2; o++)
        if (strcmp(name, names[o]) == 0) {
            *order = (row_order)o;
            return 0;
        }
    return -1;
}

static int ascending(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

typedef struct {
    float *x;
    size_t cols;
} rows_to_sort;

static void sort_band(void *ctx, size_t begin, size_t end)
{
    const rows_to_sort *s = ctx;
    for (size_t r = begin; r < end; r++)
        qsort(s->x + r * s->cols, s->cols, sizeof(float), ascending);
}

void order_rows(float *x, size_t rows, size_t cols, row_order order)
{
    if (order == ORDER_INDEX)
        return;
    rows_to_sort s = {x, cols};
    host_parallel_for(rows, host_cpu_count(), sort_band, &s);
}

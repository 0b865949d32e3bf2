/* The order of a row's logits. A running threshold rises fastest when the largest logits come early;
 * sorted ascending, they come last, and every chunk beats the threshold of the chunks before it. */
#ifndef TOPK_ROW_ORDER_H
#define TOPK_ROW_ORDER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { ORDER_INDEX, ORDER_ASCENDING } row_order;

/* "index" or "ascending" into *order: 0, or -1 for any other name. */
int row_order_from_name(const char *name, row_order *order);

/* Puts each of the rows x cols logits' rows in `order` (ORDER_INDEX: leaves them as they are), on
 * every CPU core. */
void order_rows(float *x, size_t rows, size_t cols, row_order order);

#ifdef __cplusplus
}
#endif
#endif

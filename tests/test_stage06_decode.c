/* Stage 06's decode loop on the GPU (06_fused_topk/decode_loop.h): the graph of batches of one, each
 * launch on its own row or every launch on row 0, gives the fp64 reference's answer for every token,
 * with plain launches and (where the GPU has it) with programmatic dependent launch; replayed again,
 * the same bits. */
#include <string.h>

#include "../06_fused_topk/decode_loop.h"
#include "topk_test.h"

/* Replays the graph twice, each time on poisoned outputs, and expects the reference's answer both
 * times, the second bit for bit the first. */
static void expect_loop_passes(topk_case *c, int k, bool dependent, decode_source from)
{
    decode_graph g = decode_graph_create(c, k, dependent, from);
    const size_t out = c->rows * (size_t)k;
    int *first_idx = malloc(out * sizeof(int));
    float *first_prob = malloc(out * sizeof(float));
    for (int replay = 0; replay < 2; replay++) {
        const topk_check r = decode_graph_check(c, k, &g);
        cr_expect(r.pass, "%s %zu tokens of %zu from %s, K=%d, replay %d: %zu index errors, %zu probability "
                  "failures (first bad token %zu)", dependent ? "dependent launches" : "plain launches", c->rows,
                  c->cols, from == DECODE_FROM_L2 ? "row 0" : "their own rows", k, replay, r.index_errors,
                  r.prob_failures, r.first_bad_row);
        if (replay == 0) {
            memcpy(first_idx, c->idx_host, out * sizeof(int));
            memcpy(first_prob, c->prob_host, out * sizeof(float));
        } else {
            cr_expect_arr_eq(c->idx_host, first_idx, out * sizeof(int));
            cr_expect_arr_eq(c->prob_host, first_prob, out * sizeof(float));
        }
    }
    free(first_idx);
    free(first_prob);
    decode_graph_destroy(&g);
}

Test(stage06_decode, graph_gives_the_reference_answers)
{
    const gpu_info gpu = open_or_skip();
    const bool pdl = fast_pdl_available(DTYPE_F32);
    cr_expect(pdl || gpu.cc_major < 9, "compute capability %d.%d has programmatic dependent launch",
              gpu.cc_major, gpu.cc_minor);
    const struct {
        size_t tokens, cols;
        logit_dtype dtype;
        int k;
    } cases[] = {{6, 50257, DTYPE_F32, 50}, {5, 128256, DTYPE_F32, 50}, {4, 128256, DTYPE_BF16, 10}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int from = DECODE_FROM_DRAM; from <= DECODE_FROM_L2; from++) {
            topk_case c = decode_case_create(cases[i].tokens, cases[i].cols, cases[i].dtype,
                                             (input_spec){DIST_UNIFORM, 0.0, 10.0}, 601 + (uint64_t)i, cases[i].k,
                                             (decode_source)from);
            expect_loop_passes(&c, cases[i].k, false, (decode_source)from);
            if (pdl)
                expect_loop_passes(&c, cases[i].k, true, (decode_source)from);
            topk_case_destroy(&c);
        }
}

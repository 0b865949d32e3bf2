/* Stage 06 on the GPU, every variant against the fp64 top-K: row lengths from 1 to 128256 and K from
 * 1 to 1024 (and K = V), in float32, bf16 and fp16; many rows; rows full of ties; masked rows; huge
 * magnitudes. Then threshold's own paths (its chunk, its buffer's merges, its limits). The fast
 * kernels' own paths (a guess that fails, a batch of one, the split's order) are tested in
 * test_stage06_fast.c. Last, the exercise's worked solution (K = 1). */
#include "run_stage.h"
#include "topk_test.h"

typedef struct {
    size_t cols;
    int k;
} vk;

ParameterizedTestParameters(stage06, every_variant_matches_the_reference)
{
    static const size_t lengths[] = {1, 2, 31, 32, 33, 1000, 50257, 128256};
    static const int ks[] = {1, 2, 10, 32, 33, 64, 256, 257, 700, 1024, 0 /* K = V */};
    enum { LENGTHS = sizeof lengths / sizeof lengths[0], KS = sizeof ks / sizeof ks[0] };
    static vk params[LENGTHS * KS];
    size_t n = 0;
    for (size_t i = 0; i < LENGTHS; i++)
        for (size_t j = 0; j < KS; j++) {
            const size_t k = ks[j] ? (size_t)ks[j] : lengths[i];
            if (k <= lengths[i] && k <= 1024)
                params[n++] = (vk){lengths[i], (int)k};
        }
    return cr_make_param_array(vk, params, n);
}

/* Three rows (so rows of odd length start off 16-byte boundaries), each dtype. */
ParameterizedTest(vk *p, stage06, every_variant_matches_the_reference)
{
    open_or_skip();
    for (int d = DTYPE_F32; d <= DTYPE_F16; d++) {
        topk_case c = topk_case_create(3, p->cols, (logit_dtype)d, (input_spec){DIST_NORMAL, -3.0, 3.0},
                                       900 + p->cols + (size_t)p->k + (size_t)d, p->k);
        expect_all_pass(&c, p->k, "normal(0,1)");
        topk_case_destroy(&c);
    }
}

/* Many rows: fast_row on a full grid (and fast choosing it), float32 and bf16 rows of odd length. */
Test(stage06, many_rows)
{
    open_or_skip();
    topk_case c = topk_case_create(1024, 50257, DTYPE_F32, (input_spec){DIST_UNIFORM, 0.0, 10.0}, 931, 64);
    expect_all_pass(&c, 10, "uniform [0,10]");
    expect_all_pass(&c, 64, "uniform [0,10]");
    topk_case_destroy(&c);
    c = topk_case_create(4096, 1001, DTYPE_BF16, (input_spec){DIST_UNIFORM, -5.0, 5.0}, 932, 50);
    expect_all_pass(&c, 50, "bf16 uniform [-5,5]");
    topk_case_destroy(&c);
}

/* Every logit equal: the answer is indices 0..K-1 with probability 1/V. Then logits from {0,1,2,3}:
 * thousands of ties per row, decided by index alone, across warps and across blocks; at K = 300 by
 * fast_row's sorted merge of a 512-key list, at K = 1024 by its select. */
Test(stage06, rows_full_of_ties)
{
    open_or_skip();
    static const int ks[] = {1, 4, 16, 64, 256, 300, 1024};
    const size_t cols = 50257;
    topk_case c = topk_case_create(4, cols, DTYPE_F32, (input_spec){DIST_UNIFORM, 0.0, 1.0}, 941, 1024);
    for (size_t i = 0; i < c.rows * cols; i++)
        c.x_host[i] = 0.5f;
    topk_case_refresh(&c);
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        expect_all_pass(&c, ks[i], "all equal");
    cr_expect_eq(c.idx_host[0], 0);
    for (size_t i = 0; i < c.rows * cols; i++)
        c.x_host[i] = (float)((i * 2654435761u >> 7) % 4);
    topk_case_refresh(&c);
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        expect_all_pass(&c, ks[i], "values in {0,1,2,3}");
    topk_case_destroy(&c);
}

/* Masked logits: row r keeps only r + 3 finite entries at scattered places, so for K above that
 * the -inf entries fill the rest in index order, with probability 0. */
Test(stage06, masked_rows)
{
    open_or_skip();
    const size_t rows = 40, cols = 50257;
    topk_case c = topk_case_create(rows, cols, DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0}, 951, 256);
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < cols; i++)
            if (i % 1237 != 5 || i / 1237 > r + 2)
                c.x_host[r * cols + i] = -INFINITY;
    topk_case_refresh(&c);
    for (int k = 1; k <= 256; k *= 4)
        expect_all_pass(&c, k, "masked");
    topk_case_destroy(&c);
}

/* Magnitudes far beyond where exp overflows: [500, 1000], [-1000, 1000], +-1e30. */
Test(stage06, huge_magnitudes)
{
    open_or_skip();
    const input_spec inputs[] = {{DIST_UNIFORM, 500.0, 1000.0}, {DIST_UNIFORM, -1000.0, 1000.0},
                                 {DIST_UNIFORM, -1e30, 1e30}, {DIST_OUTLIERS, -5.0, 5.0}};
    for (int i = 0; i < 4; i++) {
        topk_case c = topk_case_create(5, 50257, DTYPE_F32, inputs[i], 961 + (uint64_t)i, 50);
        expect_all_pass(&c, 50, dist_name(inputs[i].dist));
        topk_case_destroy(&c);
    }
}

/* ./run with `args` refused before the GPU: exit 2, exactly `message` on stderr, nothing on stdout. */
static void expect_refused(const char *args, const char *message)
{
    const outcome o = run_stage("06_fused_topk", args);
    cr_expect_eq(o.status, 2, "%s: exit %d", args, o.status);
    cr_expect_str_eq(o.err, message, "%s", args);
    cr_expect_str_empty(o.out);
}

/* ---- threshold: one threshold for the warp, a chunk of 128 logits, a buffer merged at 64 new ---- */

/* Row r of the case's rows rebuilt as `kind` (0: as drawn). */
enum { AS_DRAWN, RISING, FALLING, TWO_VALUES, MOSTLY_MASKED, LATE_BEST, EDGE_KINDS };

static void rebuild_row(float *x, size_t cols, int kind)
{
    for (size_t i = 0; i < cols; i++)
        switch (kind) {
        case RISING: x[i] = (float)i / 1024.0f; break;
        case FALLING: x[i] = -(float)i / 1024.0f; break;
        case TWO_VALUES: x[i] = (float)(i * 2654435761u >> 9 & 1); break;
        case MOSTLY_MASKED: x[i] = i % 7 == 0 ? x[i] : -INFINITY; break;
        case LATE_BEST: x[i] = i + 1 == cols ? 1.0f : 0.5f; break;
        default: break;
        }
}

/* Rows shorter than a chunk, one chunk, a chunk and one more, and longer, at K from 1 to 64, each in
 * every kind above: rising rows beat the threshold with every logit, so the buffer fills and merges
 * over and over; two values tie thousands of times across merges; mostly masked rows have fewer
 * finite logits than K, so -inf ones fill the answer in index order; the best logit last comes
 * after the threshold has settled on ties. Outputs poisoned before each run. */
Test(stage06, threshold_on_its_chunks_and_merges)
{
    open_or_skip();
    static const size_t lengths[] = {1, 5, 64, 127, 128, 129, 255, 256, 257, 1000, 4099, 50257};
    static const int ks[] = {1, 2, 7, 32, 33, 63, 64};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            const size_t cols = lengths[i];
            const int k = ks[j] < (int)cols ? ks[j] : (int)cols;
            topk_case c = topk_case_create(EDGE_KINDS, cols, DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0},
                                           1500 + 16 * i + j, k);
            for (int kind = 0; kind < EDGE_KINDS; kind++)
                rebuild_row(c.x_host + kind * cols, cols, kind);
            topk_case_refresh(&c);
            cr_assert(topk_supports(&threshold_topk_variant, &c, k));
            expect_variant_passes(&threshold_topk_variant, &c, k, "edge rows");
            topk_case_destroy(&c);
        }
}

/* Many rows (blocks of 4 warps, the last one part empty), K = 10 and 64, uniform and +-1e30. */
Test(stage06, threshold_on_many_rows)
{
    open_or_skip();
    const input_spec inputs[] = {{DIST_UNIFORM, 0.0, 10.0}, {DIST_UNIFORM, -1e30, 1e30}};
    for (int i = 0; i < 2; i++) {
        topk_case c = topk_case_create(1027, 50257, DTYPE_F32, inputs[i], 1700 + (uint64_t)i, 64);
        expect_variant_passes(&threshold_topk_variant, &c, 10, dist_name(inputs[i].dist));
        expect_variant_passes(&threshold_topk_variant, &c, 64, dist_name(inputs[i].dist));
        topk_case_destroy(&c);
    }
}

/* threshold takes float32 logits and K up to 64; anything else is refused before the GPU, exit 2. */
Test(stage06, threshold_refuses_past_its_limits_before_the_gpu)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"--rows 4 --cols 100 --k 65 --variant threshold", "run: --variant threshold handles K up to 64, not 65\n"},
        {"--rows 4 --cols 100 --dtype bf16 --variant threshold",
         "run: --variant threshold takes float32 logits only, not bf16\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_refused(cases[i].args, cases[i].message);
}

/* ---- The exercise: K = 1, the argmax carried in the online statistic (solution/exercise.cu) ---- */

/* The worked solution on the case with K = 1: the reference's index and probability in every row,
 * from one launch. */
static void expect_exercise_passes(topk_case *c, const char *what)
{
    const topk_variant *v = &fused_topk_exercise_variant;
    cr_assert(topk_supports(v, c, 1));
    void *workspace = topk_workspace_alloc(v, c, 1);
    int launches = 0;
    const topk_check r = topk_case_check(c, v, 1, workspace, &launches);
    CUDA_CHECK(cudaFree(workspace));
    cr_expect(r.pass,
              "exercise, %s %zu x %zu %s: %zu index errors, %zu probability failures (first bad row %zu), "
              "max rel err %.3g",
              dtype_name(c->dtype), c->rows, c->cols, what, r.index_errors, r.prob_failures, r.first_bad_row,
              r.max_rel_err);
    cr_expect_eq(launches, 1, "exercise, %s %zu x %zu %s: %d launches", dtype_name(c->dtype), c->rows, c->cols, what,
                 launches);
}

/* Rows of the logits in the case whose largest value is there more than once. */
static size_t rows_with_a_tied_max(const topk_case *c)
{
    size_t tied = 0;
    for (size_t r = 0; r < c->rows; r++) {
        const float *x = c->x_host + r * c->cols;
        float m = x[0];
        int copies = 1;
        for (size_t i = 1; i < c->cols; i++)
            if (x[i] > m)
                m = x[i], copies = 1;
            else if (x[i] == m)
                copies++;
        tied += copies > 1;
    }
    return tied;
}

/* The exercise's rows: V = 50257, uniform [0, 10], 1024 of its 8192 rows, in each dtype. In bf16 the
 * row's max is there some 150 times (its values near 10 are 1/16 apart), so the lower-index rule
 * decides almost every row. */
Test(stage06, exercise_solution_on_the_exercise_rows)
{
    open_or_skip();
    for (int d = DTYPE_F32; d <= DTYPE_F16; d++) {
        topk_case c = topk_case_create(1024, 50257, (logit_dtype)d, (input_spec){DIST_UNIFORM, 0.0, 10.0},
                                       1100 + (uint64_t)d, 1);
        if (d == DTYPE_BF16)
            cr_expect_gt(rows_with_a_tied_max(&c), c.rows * 9 / 10, "bf16 rows with a tied max: %zu",
                         rows_with_a_tied_max(&c));
        expect_exercise_passes(&c, "uniform [0,10]");
        topk_case_destroy(&c);
    }
}

/* Rows around the warp (32), the chunk (8 loads a lane: 256) and twice that; row counts that leave
 * the last block of 4 warps part empty; three dtypes. */
Test(stage06, exercise_solution_on_awkward_shapes)
{
    open_or_skip();
    static const size_t rows[] = {1, 3, 4, 5, 33};
    static const size_t cols[] = {1, 2, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1000};
    uint64_t seed = 1200;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (size_t j = 0; j < sizeof cols / sizeof cols[0]; j++)
            for (int d = DTYPE_F32; d <= DTYPE_F16; d++) {
                topk_case c = topk_case_create(rows[i], cols[j], (logit_dtype)d, (input_spec){DIST_NORMAL, -3.0, 3.0},
                                               seed++, 1);
                expect_exercise_passes(&c, "normal(0,1)");
                topk_case_destroy(&c);
            }
}

/* The input ranges every stable softmax must get right (gpu_test.h's expect_passes_on_every_range,
 * for a top-K), and +-1e30: outliers repeat one value, so their rows are ties too. */
Test(stage06, exercise_solution_on_every_range)
{
    open_or_skip();
    const input_spec ranges[] = {{DIST_UNIFORM, 0.0, 10.0},       {DIST_UNIFORM, 500.0, 1000.0},
                                 {DIST_UNIFORM, -1000.0, 1000.0}, {DIST_OUTLIERS, -5.0, 5.0},
                                 {DIST_UNIFORM, -1e30, 1e30}};
    static const softmax_shape shapes[] = {{7, 50257}, {64, 1001}, {3, 33}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
            topk_case c = topk_case_create(shapes[s].rows, shapes[s].cols, DTYPE_F32, ranges[i], 1300 + 10 * s + i, 1);
            expect_exercise_passes(&c, dist_name(ranges[i].dist));
            topk_case_destroy(&c);
        }
}

/* Ties and masks, where the combine's rule decides. Every logit equal: index 0, probability 1/V.
 * Logits in {0,1,2,3}. Masked rows (as masked_rows). Then rows built for the rule: the max at 64
 * (lane 0) and at 33 (lane 1), which the lower index wins, not the lower lane; only lane 7's slice
 * finite, so lane 0's statistic is all -inf; the max the row's last logit; the max twice in lane 5's
 * slice. */
Test(stage06, exercise_solution_on_ties_and_masks)
{
    open_or_skip();
    size_t cols = 50257;
    topk_case c = topk_case_create(4, cols, DTYPE_F32, (input_spec){DIST_UNIFORM, 0.0, 1.0}, 1400, 1);
    for (size_t i = 0; i < c.rows * cols; i++)
        c.x_host[i] = 0.5f;
    topk_case_refresh(&c);
    expect_exercise_passes(&c, "all equal");
    cr_expect_eq(c.idx_host[0], 0);
    for (size_t i = 0; i < c.rows * cols; i++)
        c.x_host[i] = (float)((i * 2654435761u >> 7) % 4);
    topk_case_refresh(&c);
    expect_exercise_passes(&c, "values in {0,1,2,3}");
    topk_case_destroy(&c);

    c = topk_case_create(40, cols, DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0}, 1401, 1);
    for (size_t r = 0; r < c.rows; r++)
        for (size_t i = 0; i < cols; i++)
            if (i % 1237 != 5 || i / 1237 > r + 2)
                c.x_host[r * cols + i] = -INFINITY;
    topk_case_refresh(&c);
    expect_exercise_passes(&c, "masked");
    topk_case_destroy(&c);

    cols = 1000;
    c = topk_case_create(4, cols, DTYPE_F32, (input_spec){DIST_NORMAL, -3.0, 3.0}, 1402, 1);
    float *x = c.x_host;
    x[64] = x[33] = 10.0f;
    for (size_t i = 0; i < cols; i++)
        if (i % 32 != 7)
            x[cols + i] = -INFINITY;
    x[2 * cols + cols - 1] = 10.0f;
    x[3 * cols + 5] = x[3 * cols + 37] = 10.0f;
    topk_case_refresh(&c);
    expect_exercise_passes(&c, "built rows");
    cr_expect_eq(c.idx_host[0], 33);
    cr_expect_eq(c.idx_host[2], (int)cols - 1);
    cr_expect_eq(c.idx_host[3], 5);
    topk_case_destroy(&c);
}

/* The exercise takes K = 1 only: any other K, the default 10 included, is refused before the GPU
 * with exit 2 (./run links the scaffold; the refusal is the same in both programs). */
Test(stage06, exercise_refuses_k_above_1_before_the_gpu)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"--rows 4 --cols 100 --k 2 --variant exercise", "run: --variant exercise handles K up to 1, not 2\n"},
        {"--rows 4 --cols 100 --variant exercise", "run: --variant exercise handles K up to 1, not 10\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_refused(cases[i].args, cases[i].message);
}

/* ---- The libraries' variants ---- */

/* cub_topk and flashinfer give the top-K's logits, not their probabilities: --output, which writes
 * probabilities, refuses them before the GPU (exit 2), whether or not this build has them. */
Test(stage06, output_refuses_a_logits_only_variant_before_the_gpu)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"--rows 4 --cols 100 --k 5 --variant cub_topk --output never_written",
         "run: --output: cub_topk gives the top-K's logits, not their probabilities\n"},
        {"--rows 4 --cols 100 --k 5 --variant flashinfer --output never_written",
         "run: --output: flashinfer gives the top-K's logits, not their probabilities\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_refused(cases[i].args, cases[i].message);
}

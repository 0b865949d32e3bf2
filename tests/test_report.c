/* Output formatting, the timing summary, the CSV header that names where numbers came from, and the
 * softmax and top-K rows: the table lines and CSV lines each kind builds around report.c's columns. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/bench.h"
#include "../common/check.h"
#include "../common/gpu.h"
#include "../common/report.h"
#include "../06_fused_topk/host/topk_bench.h"

Test(report, format_count)
{
    const struct {
        size_t n;
        const char *text;
    } cases[] = {{1, "1"},        {1000, "1K"},          {4097, "4097"},       {1500, "1500"},
                 {1000000, "1M"}, {100000000, "100M"}, {2000000000, "2G"}, {1048576, "1048576"}};
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        format_count(cases[i].n, buf, sizeof buf);
        cr_expect_str_eq(buf, cases[i].text);
    }
}

Test(report, format_bytes)
{
    const struct {
        size_t bytes;
        const char *text;
    } cases[] = {{0, "0 bytes"},           {1023, "1023 bytes"},         {1024, "1.0 KiB"},
                 {1536, "1.5 KiB"},        {(size_t)16 << 30, "16.0 GiB"}, {(size_t)1 << 62, "4.0 EiB"},
                 {SIZE_MAX, "16.0 EiB"}};
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        format_bytes(cases[i].bytes, buf, sizeof buf);
        cr_expect_str_eq(buf, cases[i].text);
    }
}

Test(report, timing_summary_median_min_max)
{
    double odd[] = {5.0, 1.0, 3.0};
    gpu_timing t = timing_summary(odd, 3);
    cr_expect_eq(t.median_ms, 3.0);
    cr_expect_eq(t.min_ms, 1.0);
    cr_expect_eq(t.max_ms, 5.0);
    double even[] = {4.0, 1.0, 2.0, 100.0};
    t = timing_summary(even, 4);
    cr_expect_eq(t.median_ms, 3.0);
    cr_expect_eq(t.max_ms, 100.0);
}

static int count_fields(const char *line)
{
    int fields = 1;
    for (const char *p = line; *p && *p != '\n'; p++)
        fields += *p == ',';
    return fields;
}

Test(report, csv_header_names_gpu_cuda_date_code_and_columns)
{
    char path[] = "/tmp/softmax-csv-XXXXXX";
    const int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);

    const gpu_info gpu = {.name = "Test GPU 9000", .cc_major = 9, .cc_minor = 0, .sms = 132,
                          .l2_bytes = 60000000, .runtime_version = 13000, .driver_version = 13010};
    char *argv[] = {"./run", "--n", "1K", "--csv", "a\nb.csv"}; /* the newline is escaped: one line */
    FILE *csv = fopen(path, "w");
    cr_assert_not_null(csv);
    report_csv_header(csv, &gpu, "device-to-device copy", 4321.0, 5, argv, SOFTMAX_CSV_COLUMNS);
    result_row row = {.experiment = "timing", .rows = 1, .cols = 1000, .input = {DIST_UNIFORM, 0.0, 10.0},
                      .seed = 7, .launches = 2, .bytes_per_elem = 12.0,
                      .measured = {.variant = "naive", .timed = true, .time = {0.5, 0.4, 0.9}, .gbps = 16.0,
                                   .pct_of_ceiling = 0.37, .ceiling_gbps = 4321.0}};
    row.check.worst_row_sum = -NAN;
    softmax_csv_row(csv, &row);
    row.measured.baseline = "naive";
    row.measured.baseline_ms = 0.25;
    softmax_csv_row(csv, &row);
    cr_assert_eq(fclose(csv), 0);

    FILE *in = fopen(path, "r");
    cr_assert_not_null(in);
    char lines[11][512];
    int n = 0;
    while (n < 11 && fgets(lines[n], sizeof lines[n], in))
        n++;
    fclose(in);
    remove(path);

    cr_assert_eq(n, 10, "expected 7 comment lines, a header and two rows; got %d lines", n);
    cr_expect_str_eq(lines[0], "# gpu: Test GPU 9000 (sm_90, 132 SMs, 60 MB L2)\n");
    cr_expect_str_eq(lines[1], "# cuda: runtime 13.0, driver 13.1\n");
    cr_expect_eq(strncmp(lines[2], "# date: 20", 10), 0, "%s", lines[2]);
    cr_expect_eq(strlen(lines[2]), strlen("# date: 2026-11-22T10:00:00Z\n"), "%s", lines[2]);
    /* The code: one word, git describe's or "unknown"; the tests' build is no stage's, so no sources. */
    cr_expect_eq(strncmp(lines[3], "# code: ", 8), 0, "%s", lines[3]);
    cr_expect(strlen(lines[3]) > 9 && strcspn(lines[3] + 8, " \n") == strlen(lines[3]) - 9, "%s", lines[3]);
    cr_expect_str_eq(lines[4], "# sources: none\n");
    cr_expect_eq(strncmp(lines[5], "# ceiling: device-to-device copy 4321.0 GB/s", 44), 0, "%s", lines[5]);
    cr_expect_str_eq(lines[6], "# command: ./run --n 1K --csv a\\x0ab.csv\n");
    cr_expect_eq(strncmp(lines[7], "experiment,variant,rows,cols,dist,lo,hi,seed,median_ms", 54), 0);
    cr_expect_eq(count_fields(lines[8]), count_fields(lines[7]));
    cr_expect_eq(strncmp(lines[8], "timing,naive,1,1000,uniform,0,10,7,0.500000,", 44), 0, "%s", lines[8]);
    cr_expect(strstr(lines[8], ",nan,0,FAIL,,\n") != NULL, "NaN row sum must print as nan: %s", lines[8]);
    cr_expect_eq(count_fields(lines[9]), count_fields(lines[7]));
    cr_expect(strstr(lines[9], ",FAIL,naive,0.250000\n") != NULL, "baseline columns: %s", lines[9]);
}

/* A softmax row with known numbers: its table lines (speedup, overhead, base, no comparison) and CSV
 * lines (timed, and a correctness row's, whose timing fields are empty), to the byte. */
Test(report, softmax_row_table_and_csv_lines, .init = cr_redirect_stdout)
{
    const measurement online_rows = {.variant = "online_rows", .timed = true, .time = {0.5, 0.4, 0.9}, .gbps = 2500.0,
                                     .pct_of_ceiling = 84.25, .ceiling_gbps = 2967.4, .baseline = "cudnn",
                                     .baseline_ms = 1.0};
    const verify_result passed = {.max_abs_err = 3e-9, .max_rel_err = 1.5e-7, .worst_row_sum = 1.0000001, .pass = true};
    result_row row = {.experiment = "rows", .rows = 8192, .cols = 50257, .input = {DIST_OUTLIERS, -1000.0, 0.1},
                      .seed = 1002, .check = passed, .launches = 1, .bytes_per_elem = 8.0, .measured = online_rows};
    softmax_timing_header(RELATIVE_SPEEDUP);
    softmax_timing_row(&row, RELATIVE_SPEEDUP);
    softmax_timing_row(&row, RELATIVE_OVERHEAD);
    row.measured.baseline = NULL;
    softmax_timing_row(&row, RELATIVE_SPEEDUP);
    softmax_timing_row(&row, RELATIVE_NONE);
    row.measured.baseline = "cudnn";
    softmax_csv_row(stdout, &row);
    row.measured.timed = false;
    row.measured.baseline = NULL;
    softmax_csv_row(stdout, &row);
    fflush(stdout);
    cr_assert_stdout_eq_str(
        "           n  variant        median ms     min ms     max ms     GB/s  % ceil  B/elem launches max rel err  check   speedup\n"
        "  8192x50257  online_rows       0.5000     0.4000     0.9000     2500   84.2%       8        1   1.50e-07   PASS     2.00x\n"
        "  8192x50257  online_rows       0.5000     0.4000     0.9000     2500   84.2%       8        1   1.50e-07   PASS    -50.0%\n"
        "  8192x50257  online_rows       0.5000     0.4000     0.9000     2500   84.2%       8        1   1.50e-07   PASS      base\n"
        "  8192x50257  online_rows       0.5000     0.4000     0.9000     2500   84.2%       8        1   1.50e-07   PASS\n"
        "rows,online_rows,8192,50257,outliers,-1000,0.10000000000000001,1002,0.500000,0.400000,0.900000,2500.0,84.25,"
        "2967.4,8,1,3.000e-09,1.500e-07,1.0000001,0,PASS,cudnn,1.000000\n"
        "rows,online_rows,8192,50257,outliers,-1000,0.10000000000000001,1002,,,,,,,8,1,3.000e-09,1.500e-07,1.0000001,0,"
        "PASS,,\n");
}

/* A top-K row with known numbers: its table lines (the baseline, and a failing row with NaN errors
 * compared with it) and CSV lines (random logits, and logits from a file), to the byte. */
Test(report, topk_row_table_and_csv_lines, .init = cr_redirect_stdout)
{
    topk_case c = {.rows = 8192, .cols = 50257, .dtype = DTYPE_BF16, .input = {DIST_NORMAL, -3.0, 3.0}, .seed = 1003};
    topk_row row = {.experiment = "workload", .c = &c, .k = 10, .launches = 3, .bytes_per_row = 1608123.0,
                    .check = {.max_abs_err = 1e-9, .max_rel_err = 2.5e-6, .pass = true},
                    .measured = {.variant = "unfused", .timed = true, .time = {2.123456, 2.0, 3.5}, .gbps = 777.7,
                                 .pct_of_ceiling = 23.45, .ceiling_gbps = 3300.0}};
    topk_row fail = {.experiment = "batch1", .c = &c, .k = 1024, .launches = 1, .bytes_per_row = 209220.0,
                     .check = {.index_errors = 12, .nonfinite = 4, .max_abs_err = -NAN, .max_rel_err = NAN},
                     .measured = {.variant = "fast_split", .timed = true, .time = {0.036, 0.03, 0.05}, .gbps = 2900.0,
                                  .pct_of_ceiling = 87.9, .ceiling_gbps = 3300.0, .baseline = "unfused",
                                  .baseline_ms = 2.123456}};
    topk_timing_header(RELATIVE_SPEEDUP);
    topk_timing_row(&row, RELATIVE_SPEEDUP);
    topk_timing_row(&fail, RELATIVE_SPEEDUP);
    topk_csv_row(stdout, &row);
    c.from_file = true;
    topk_csv_row(stdout, &fail);
    fflush(stdout);
    cr_assert_stdout_eq_str(
        "    rows x V dtype       K  variant      median ms     min ms     max ms    GB/s  % read    KB/row launches idx err max rel err  check  speedup\n"
        "  8192x50257 bf16       10  unfused         2.1235     2.0000     3.5000     778   23.4%    1608.1        3       0    2.50e-06   PASS     base\n"
        "  8192x50257 bf16     1024  fast_split      0.0360     0.0300     0.0500    2900   87.9%     209.2        1      12         nan   FAIL   58.98x\n"
        "workload,unfused,bf16,8192,50257,10,normal,-3,3,1003,2.123456,2.000000,3.500000,777.7,23.45,3300.0,1608123,3,0,"
        "1.000e-09,2.500e-06,0,PASS,,\n"
        "batch1,fast_split,bf16,8192,50257,1024,file,,,,0.036000,0.030000,0.050000,2900.0,87.90,3300.0,209220,1,12,nan,"
        "nan,4,FAIL,unfused,2.123456\n");
}

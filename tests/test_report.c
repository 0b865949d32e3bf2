/* Output formatting, the timing summary, and the CSV header that names where numbers came from. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/gpu.h"
#include "../common/report.h"

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

Test(report, csv_header_names_gpu_cuda_date_and_columns)
{
    char path[] = "/tmp/softmax-csv-XXXXXX";
    const int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);

    const gpu_info gpu = {.name = "Test GPU 9000", .cc_major = 9, .cc_minor = 0, .sms = 132,
                          .l2_bytes = 60000000, .runtime_version = 13000, .driver_version = 13010};
    char *argv[] = {"./run", "--n", "1K"};
    FILE *csv = report_csv_open(path, &gpu, "device-to-device copy", 4321.0, 3, argv, SOFTMAX_CSV_COLUMNS);
    result_row row = {.experiment = "timing", .variant = "naive", .rows = 1, .cols = 1000,
                      .input = {DIST_UNIFORM, 0.0, 10.0}, .seed = 7, .launches = 2,
                      .bytes_per_elem = 12.0, .timed = true, .time = {0.5, 0.4, 0.9},
                      .gbps = 16.0, .pct_of_ceiling = 0.37, .ceiling_gbps = 4321.0};
    row.check.worst_row_sum = -NAN;
    report_csv_row(csv, &row);
    row.baseline = "naive";
    row.baseline_ms = 0.25;
    report_csv_row(csv, &row);
    report_csv_close(csv, path);

    FILE *in = fopen(path, "r");
    cr_assert_not_null(in);
    char lines[9][512];
    int n = 0;
    while (n < 9 && fgets(lines[n], sizeof lines[n], in))
        n++;
    fclose(in);
    remove(path);

    cr_assert_eq(n, 8, "expected 5 comment lines, a header and two rows; got %d lines", n);
    cr_expect_str_eq(lines[0], "# gpu: Test GPU 9000 (sm_90, 132 SMs, 60 MB L2)\n");
    cr_expect_str_eq(lines[1], "# cuda: runtime 13.0, driver 13.1\n");
    cr_expect_eq(strncmp(lines[2], "# date: 20", 10), 0, "%s", lines[2]);
    cr_expect_eq(strlen(lines[2]), strlen("# date: 2026-11-22T10:00:00Z\n"), "%s", lines[2]);
    cr_expect_eq(strncmp(lines[3], "# ceiling: device-to-device copy 4321.0 GB/s", 44), 0, "%s", lines[3]);
    cr_expect_str_eq(lines[4], "# command: ./run --n 1K\n");
    cr_expect_eq(strncmp(lines[5], "experiment,variant,rows,cols,dist,lo,hi,seed,median_ms", 54), 0);
    cr_expect_eq(count_fields(lines[6]), count_fields(lines[5]));
    cr_expect_eq(strncmp(lines[6], "timing,naive,1,1000,uniform,0,10,7,0.500000,", 44), 0, "%s", lines[6]);
    cr_expect(strstr(lines[6], ",nan,0,FAIL,,\n") != NULL, "NaN row sum must print as nan: %s", lines[6]);
    cr_expect_eq(count_fields(lines[7]), count_fields(lines[5]));
    cr_expect(strstr(lines[7], ",FAIL,naive,0.250000\n") != NULL, "baseline columns: %s", lines[7]);
}

Test(report, csv_open_refuses_an_unwritable_path, .exit_code = 2, .init = cr_redirect_stderr)
{
    const gpu_info gpu = {.name = "x"};
    char *argv[] = {"./run"};
    report_csv_open("/nonexistent-dir/out.csv", &gpu, "copy", 1.0, 1, argv, SOFTMAX_CSV_COLUMNS);
}

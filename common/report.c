#include "report.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "check.h"

void format_count(size_t n, char *buf, size_t len)
{
    static const char suffix[] = {'\0', 'K', 'M', 'G'};
    int k = 0;
    size_t v = n;
    while (k < 3 && v >= 1000 && v % 1000 == 0)
        v /= 1000, k++;
    if (k == 0)
        snprintf(buf, len, "%zu", n);
    else
        snprintf(buf, len, "%zu%c", v, suffix[k]);
}

void format_shape(size_t rows, size_t cols, char *buf, size_t len)
{
    char r[32], c[32];
    format_count(rows, r, sizeof r);
    format_count(cols, c, sizeof c);
    if (rows == 1)
        snprintf(buf, len, "%s", c);
    else
        snprintf(buf, len, "%sx%s", r, c);
}

static void format_range(const result_row *row, char *buf, size_t len)
{
    snprintf(buf, len, "%s [%g,%g]", dist_name(row->input.dist), row->input.lo, row->input.hi);
}

double unsigned_nan(double v) { return isnan(v) ? NAN : v; }

static const char *verdict(const result_row *row) { return row->check.pass ? "PASS" : "FAIL"; }

void report_device(const gpu_info *gpu, const char *ceiling_name, double ceiling_gbps)
{
    printf("GPU: %s (sm_%d%d, %d SMs, %.0f MB L2, DRAM %.0f GB/s theoretical), "
           "CUDA runtime %d.%d, driver %d.%d\n",
           gpu->name, gpu->cc_major, gpu->cc_minor, gpu->sms, gpu->l2_bytes / 1e6,
           gpu->dram_theoretical_gbps, gpu->runtime_version / 1000, gpu->runtime_version % 1000 / 10,
           gpu->driver_version / 1000, gpu->driver_version % 1000 / 10);
    printf("Ceiling measured in this run: %s %.0f GB/s (%.0f%% of theoretical)\n\n", ceiling_name,
           ceiling_gbps, 100.0 * ceiling_gbps / gpu->dram_theoretical_gbps);
}

void report_accuracy_header(void)
{
    printf("%12s  %-22s %-13s %12s %11s %10s %6s\n", "n", "input", "variant", "sum(out)",
           "non-finite", "max rel err", "check");
}

void report_accuracy_row(const result_row *row)
{
    char n[64], input[64];
    format_shape(row->rows, row->cols, n, sizeof n);
    format_range(row, input, sizeof input);
    printf("%12s  %-22s %-13s %12.6g %11zu %10.2e %6s\n", n, input, row->variant,
           unsigned_nan(row->check.worst_row_sum), row->check.nonfinite,
           unsigned_nan(row->check.max_rel_err), verdict(row));
}

void report_timing_header(relative_mode relative)
{
    printf("%12s  %-13s %10s %10s %10s %8s %7s %7s %8s %10s %6s", "n", "variant", "median ms",
           "min ms", "max ms", "GB/s", "% ceil", "B/elem", "launches", "max rel err", "check");
    if (relative != RELATIVE_NONE)
        printf(" %9s", relative == RELATIVE_OVERHEAD ? "overhead" : "speedup");
    printf("\n");
}

void report_timing_row(const result_row *row, relative_mode relative)
{
    char n[64];
    format_shape(row->rows, row->cols, n, sizeof n);
    printf("%12s  %-13s %10.4f %10.4f %10.4f %8.0f %6.1f%% %7.0f %8d %10.2e %6s", n, row->variant,
           row->time.median_ms, row->time.min_ms, row->time.max_ms, row->gbps, row->pct_of_ceiling,
           row->bytes_per_elem, row->launches, unsigned_nan(row->check.max_rel_err), verdict(row));
    if (relative != RELATIVE_NONE && !row->baseline)
        printf(" %9s", "base");
    else if (relative == RELATIVE_OVERHEAD)
        printf(" %+8.1f%%", 100.0 * (row->time.median_ms / row->baseline_ms - 1.0));
    else if (relative == RELATIVE_SPEEDUP)
        printf(" %8.2fx", row->baseline_ms / row->time.median_ms);
    printf("\n");
    if (row->pct_of_ceiling > 100.0)
        fprintf(stderr, "%s: warning: %s at n = %s is above the measured ceiling: the timing or the "
                        "byte count is wrong\n", program_name(), row->variant, n);
}

FILE *report_csv_open(const char *path, const gpu_info *gpu, const char *ceiling_name,
                      double ceiling_gbps, int argc, char **argv, const char *columns)
{
    FILE *csv = fopen(path, "w");
    if (!csv)
        die(EXIT_USAGE, "cannot write CSV file '%s': %s", path, strerror(errno));

    char date[32];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(csv, "# gpu: %s (sm_%d%d, %d SMs, %.0f MB L2)\n", gpu->name, gpu->cc_major,
            gpu->cc_minor, gpu->sms, gpu->l2_bytes / 1e6);
    fprintf(csv, "# cuda: runtime %d.%d, driver %d.%d\n", gpu->runtime_version / 1000,
            gpu->runtime_version % 1000 / 10, gpu->driver_version / 1000, gpu->driver_version % 1000 / 10);
    fprintf(csv, "# date: %s\n", date);
    fprintf(csv, "# ceiling: %s %.1f GB/s; dram theoretical %.1f GB/s\n", ceiling_name,
            ceiling_gbps, gpu->dram_theoretical_gbps);
    fprintf(csv, "# command:");
    for (int i = 0; i < argc; i++)
        fprintf(csv, " %s", argv[i]);
    fprintf(csv, "\n%s\n", columns);
    return csv;
}

void report_csv_row(FILE *csv, const result_row *row)
{
    fprintf(csv, "%s,%s,%zu,%zu,%s,%.17g,%.17g,%llu,", row->experiment, row->variant, row->rows,
            row->cols, dist_name(row->input.dist), row->input.lo, row->input.hi,
            (unsigned long long)row->seed);
    if (row->timed)
        fprintf(csv, "%.6f,%.6f,%.6f,%.1f,%.2f,%.1f,", row->time.median_ms, row->time.min_ms,
                row->time.max_ms, row->gbps, row->pct_of_ceiling, row->ceiling_gbps);
    else
        fprintf(csv, ",,,,,,");
    fprintf(csv, "%g,%d,%.3e,%.3e,%.9g,%zu,%s,", row->bytes_per_elem, row->launches,
            unsigned_nan(row->check.max_abs_err), unsigned_nan(row->check.max_rel_err),
            unsigned_nan(row->check.worst_row_sum), row->check.nonfinite, verdict(row));
    if (row->baseline)
        fprintf(csv, "%s,%.6f\n", row->baseline, row->baseline_ms);
    else
        fprintf(csv, ",\n");
}

void report_csv_close(FILE *csv, const char *path)
{
    if (ferror(csv) | fclose(csv))
        die(1, "writing CSV file '%s' failed", path);
}

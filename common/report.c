#include "report.h"

#include <math.h>
#include <time.h>

#include "check.h"

/* The code a run measured, as common/build.mk compiles it in: `git describe` of the checkout, and
 * the hash of the stage's own sources (plots/make_plots.sh states its rule). */
#ifndef COURSE_CODE
#define COURSE_CODE "unknown"
#endif
#ifndef COURSE_SOURCES
#define COURSE_SOURCES "none"
#endif

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

double unsigned_nan(double v) { return isnan(v) ? NAN : v; }

const char *verdict(bool pass) { return pass ? "PASS" : "FAIL"; }

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

void report_timing_header(const timing_layout *layout, relative_mode relative, const char *before,
                          const char *after)
{
    printf("%12s%s %10s %10s %10s %*s %7s%s", layout->shape_heading, before, "median ms", "min ms", "max ms",
           layout->gbps_width, "GB/s", layout->pct_heading, after);
    if (relative != RELATIVE_NONE)
        printf(" %*s", layout->relative_width, relative == RELATIVE_OVERHEAD ? "overhead" : "speedup");
    printf("\n");
}

void report_timing_row(const timing_layout *layout, relative_mode relative, const char *shape,
                       const char *before, const measurement *m, const char *after)
{
    printf("%12s%s %10.4f %10.4f %10.4f %*.0f %6.1f%%%s", shape, before, m->time.median_ms, m->time.min_ms,
           m->time.max_ms, layout->gbps_width, m->gbps, m->pct_of_ceiling, after);
    /* The number takes all but the last character of the column: '%' or 'x'. */
    if (relative != RELATIVE_NONE && !m->baseline)
        printf(" %*s", layout->relative_width, "base");
    else if (relative == RELATIVE_OVERHEAD)
        printf(" %+*.1f%%", layout->relative_width - 1, 100.0 * (m->time.median_ms / m->baseline_ms - 1.0));
    else if (relative == RELATIVE_SPEEDUP)
        printf(" %*.2fx", layout->relative_width - 1, m->baseline_ms / m->time.median_ms);
    printf("\n");
    if (m->pct_of_ceiling > 100.0)
        fprintf(stderr, "%s: warning: %s at %s is above the measured ceiling: the timing or the byte count "
                        "is wrong\n", program_name(), m->variant, shape);
}

void report_csv_header(FILE *csv, const gpu_info *gpu, const char *ceiling_name, double ceiling_gbps, int argc,
                       char **argv, const char *columns)
{
    char date[32];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(csv, "# gpu: %s (sm_%d%d, %d SMs, %.0f MB L2)\n", gpu->name, gpu->cc_major,
            gpu->cc_minor, gpu->sms, gpu->l2_bytes / 1e6);
    fprintf(csv, "# cuda: runtime %d.%d, driver %d.%d\n", gpu->runtime_version / 1000,
            gpu->runtime_version % 1000 / 10, gpu->driver_version / 1000, gpu->driver_version % 1000 / 10);
    fprintf(csv, "# date: %s\n", date);
    fprintf(csv, "# code: %s\n", COURSE_CODE);
    fprintf(csv, "# sources: %s\n", COURSE_SOURCES);
    fprintf(csv, "# ceiling: %s %.1f GB/s; dram theoretical %.1f GB/s\n", ceiling_name,
            ceiling_gbps, gpu->dram_theoretical_gbps);
    fprintf(csv, "# command:");
    for (int i = 0; i < argc; i++)
        fprintf(csv, " %s", quote_arg(argv[i]).text);
    fprintf(csv, "\n%s\n", columns);
}

void report_csv_row(FILE *csv, const char *before, const measurement *m, const char *after)
{
    fputs(before, csv);
    if (m->timed)
        fprintf(csv, "%.6f,%.6f,%.6f,%.1f,%.2f,%.1f,", m->time.median_ms, m->time.min_ms, m->time.max_ms, m->gbps,
                m->pct_of_ceiling, m->ceiling_gbps);
    else
        fputs(",,,,,,", csv);
    fputs(after, csv);
    if (m->baseline)
        fprintf(csv, "%s,%.6f\n", m->baseline, m->baseline_ms);
    else
        fputs(",\n", csv);
}

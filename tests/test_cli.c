#define _POSIX_C_SOURCE 200809L
/* The command line: every flag of every stage's tables parses, and every malformed one is refused
 * with a message. parse() takes the flags of all the tables at once, the shared ones into a
 * cli_options and stage 06's into `t`, then makes the shared checks (cli_check). */
#include <criterion/criterion.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../06_fused_topk/host/topk_flags.h"
#include "../common/cli.h"

static char err[512];
static topk_options t; /* stage 06's flags of the last parse() */

static cli_status parse(cli_options *o, int argc, const char **argv)
{
    cli_defaults(o);
    topk_options_defaults(&t);
    err[0] = '\0';
    const cli_table tables[] = {{cli_size_flags, o}, {cli_shape_flags, o}, {cli_shared_flags, o}, {topk_flags, &t}};
    const cli_status st = cli_parse(argc, (char **)argv, tables, 4, err, sizeof err);
    if (st != CLI_OK)
        return st;
    return cli_check(o, FLT_MAX, t.input_path ? NULL : "float32", err, sizeof err);
}

#define PARSE(o, ...)                                                                              \
    parse(o, (int)(sizeof((const char *[]){"run", __VA_ARGS__}) / sizeof(const char *)),            \
          (const char *[]){"run", __VA_ARGS__})

Test(cli, defaults)
{
    cli_options o;
    const char *argv[] = {"run"};
    cr_assert_eq(parse(&o, 1, argv), CLI_OK);
    cr_expect_eq(o.n_sizes, 0);
    cr_expect_eq(o.input.dist, DIST_UNIFORM);
    cr_expect_eq(o.input.lo, 0.0);
    cr_expect_eq(o.input.hi, 10.0);
    cr_expect_not(o.range_given);
    cr_expect_eq(o.iters, 100);
    cr_expect_eq(o.warmup, 10);
    cr_expect_null(o.csv_path);
    cr_expect_null(o.variant);
}

Test(cli, parses_every_flag)
{
    cli_options o;
    cr_assert_eq(PARSE(&o, "--n", "10K", "--range", "-1000:1000", "--dist", "outliers", "--iters", "7",
                       "--warmup=0", "--seed", "42", "--csv", "out.csv", "--variant", "fused"),
                 CLI_OK, "%s", err);
    cr_expect_eq(o.n_sizes, 1);
    cr_expect_eq(o.sizes[0], 10000);
    cr_expect_eq(o.input.lo, -1000.0);
    cr_expect_eq(o.input.hi, 1000.0);
    cr_expect(o.range_given);
    cr_expect_eq(o.input.dist, DIST_OUTLIERS);
    cr_expect_eq(o.iters, 7);
    cr_expect_eq(o.warmup, 0);
    cr_expect_eq(o.seed, 42);
    cr_expect_str_eq(o.csv_path, "out.csv");
    cr_expect_str_eq(o.variant, "fused");
    cr_assert_eq(PARSE(&o, "--seed", "18446744073709551615", "--range", "-1e3:+5"), CLI_OK, "%s", err);
    cr_expect_eq(o.seed, UINT64_MAX);
    cr_expect_eq(o.input.lo, -1000.0);
    cr_expect_eq(o.input.hi, 5.0);
}

Test(cli, parses_a_size_list)
{
    cli_options o;
    cr_assert_eq(PARSE(&o, "--sizes", "1,31,1K,1M,1e8,2G"), CLI_OK, "%s", err);
    const size_t want[] = {1, 31, 1000, 1000000, 100000000, 2000000000};
    cr_assert_eq(o.n_sizes, 6);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(o.sizes[i], want[i], "sizes[%d] = %zu", i, o.sizes[i]);
}

Test(cli, counts)
{
    size_t v;
    cr_expect(cli_parse_count("4097", SIZE_MAX, &v) == 0 && v == 4097);
    cr_expect(cli_parse_count("10k", SIZE_MAX, &v) == 0 && v == 10000);
    cr_expect(cli_parse_count("1e7", SIZE_MAX, &v) == 0 && v == 10000000);
    cr_expect(cli_parse_count("18446744073709551615", SIZE_MAX, &v) == 0 && v == SIZE_MAX);
    cr_expect(cli_parse_count("1K", 1000, &v) == 0 && v == 1000);
    cr_expect_neq(cli_parse_count("1001", 1000, &v), 0);
    cr_expect_neq(cli_parse_count("2e3", 1999, &v), 0);
    const char *bad[] = {"",   "0",  "-5",  "+5",  "1.5K", "10X", "K", "1e", "1e99", "1e+5", "1e 5", "5 ", " 5",
                         "99999999999999999999999", "1e4294967301" /* an exponent that wraps an unsigned to 5 */};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_neq(cli_parse_count(bad[i], SIZE_MAX, &v), 0, "'%s' was accepted", bad[i]);
}

/* Stage 06's draw: --sample takes no value; T, P, M are numbers in their ranges; T, P and K may
 * name a .npy file of one value a row instead (a later --k replaces an earlier one). */
Test(cli, sampling_flags)
{
    cli_options o;
    cr_assert_eq(PARSE(&o, "--rows", "4", "--cols", "100"), CLI_OK, "%s", err);
    cr_expect(!t.sample && !t.sampling_given && t.temperature == 1.0f && t.top_p == 1.0f && t.min_p == 0.0f);
    cr_assert_eq(PARSE(&o, "--sample", "--temperature", "0.7", "--top-p=0.9", "--min-p", "0.05", "--seed", "7"), CLI_OK,
                 "%s", err);
    cr_expect(t.sample && t.sampling_given && t.temperature == 0.7f && t.top_p == 0.9f && t.min_p == 0.05f);
    cr_expect_eq(o.seed, 7);
    cr_assert_eq(PARSE(&o, "--sample", "--temperature", "0", "--top-p", "1"), CLI_OK, "%s", err);
    cr_assert_eq(PARSE(&o, "--temperature", "t.npy", "--top-p", "p.npy", "--k", "5", "--k", "k.npy"), CLI_OK, "%s",
                 err);
    cr_expect_str_eq(t.temperature_path, "t.npy");
    cr_expect_str_eq(t.top_p_path, "p.npy");
    cr_expect_str_eq(t.k_path, "k.npy");
    cr_expect_eq(t.k, 0);
    cr_assert_eq(PARSE(&o, "--k", "k.npy", "--k", "5"), CLI_OK, "%s", err);
    cr_expect(t.k == 5 && t.k_path == NULL);
    static const char *const bad[][2] = {{"--temperature", "-0.5"}, {"--temperature", "nan"}, {"--temperature", "1e99"},
                                         {"--top-p", "0"},          {"--top-p", "1.5"},        {"--min-p", "1"},
                                         {"--min-p", "-1"},         {"--min-p", "m.npy"},      {"--top-p", ""}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(PARSE(&o, bad[i][0], bad[i][1]), CLI_ERROR, "%s %s", bad[i][0], bad[i][1]);
        cr_expect(strncmp(err, bad[i][0], strlen(bad[i][0])) == 0, "%s", err);
    }
    cr_expect_eq(PARSE(&o, "--sample=1"), CLI_ERROR);
    cr_expect_str_eq(err, "--sample takes no value");
}

/* Where the last of the same flag counts, a number after a file replaces it; a number too small for
 * a double is taken as it rounds (0 or a subnormal), not refused as not finite; a file name that
 * starts with -- can be given with = or as ./--name; a range whose numbers all fit float32 passes. */
Test(cli, edges_of_values)
{
    cli_options o;
    cr_assert_eq(PARSE(&o, "--temperature", "t.npy", "--temperature", "0.5", "--top-p", "p.npy", "--top-p", "0.9"),
                 CLI_OK, "%s", err);
    cr_expect(t.temperature_path == NULL && t.temperature == 0.5f);
    cr_expect(t.top_p_path == NULL && t.top_p == 0.9f);
    cr_assert_eq(PARSE(&o, "--range", "0:1e-320", "--temperature", "1e-400"), CLI_OK, "%s", err);
    cr_expect(o.input.lo == 0.0 && o.input.hi > 0.0 && t.temperature == 0.0f);
    cr_expect_eq(PARSE(&o, "--temperature", "1e400"), CLI_ERROR);
    cr_expect_eq(PARSE(&o, "--min-p", "0.99999999"), CLI_ERROR);
    cr_expect_str_eq(err, "--min-p: expected a number in [0, 1) (0: no cut), got '0.99999999' (1 in float32)");
    cr_expect_eq(PARSE(&o, "--top-p", "1e-50"), CLI_ERROR);
    cr_expect(strstr(err, "got '1e-50' (0 in float32)") != NULL, "%s", err);
    cr_expect_eq(PARSE(&o, "--this-flag-has-a-name-longer-than-sixty-four-characters-which-is-a-lot-of-them"),
                 CLI_ERROR);
    cr_expect_str_eq(err, "unknown flag '--this-flag-has-a-name-longer-than-sixty-four-characters-which-is-a-lot-of-"
                          "them'");
    cr_assert_eq(PARSE(&o, "--sizes", "0000000000000000000000000000000000001000,2K"), CLI_OK, "%s", err);
    cr_expect(o.n_sizes == 2 && o.sizes[0] == 1000 && o.sizes[1] == 2000);
    /* --input with a shape, or with a range nothing will be drawn from: the stage refuses them, after
     * it has refused --input itself where it takes none (test_programs.c). */
    cr_expect_eq(PARSE(&o, "--input", "x.npy", "--rows", "2", "--cols", "100"), CLI_OK, "%s", err);
    cr_expect_eq(PARSE(&o, "--input", "x.npy", "--range", "0:1e39"), CLI_OK, "%s", err);
    cr_assert_eq(PARSE(&o, "--csv=--out.csv", "--output", "./--prefix"), CLI_OK, "%s", err);
    cr_expect_str_eq(o.csv_path, "--out.csv");
    cr_expect_str_eq(t.output_prefix, "./--prefix");
    cr_assert_eq(PARSE(&o, "--range", "-3e38:3e38"), CLI_OK, "%s", err);
    cr_assert_eq(PARSE(&o, "--range", "-1e37:1e37", "--dist", "normal"), CLI_OK, "%s", err);
    cr_expect(o.dist_given && !o.seed_given);
    cr_assert_eq(PARSE(&o, "--seed", "3"), CLI_OK, "%s", err);
    cr_expect(o.seed_given && !o.dist_given);
}

Test(cli, help)
{
    cli_options o;
    cr_expect_eq(PARSE(&o, "--n", "5", "--help"), CLI_HELP);
    cr_expect_eq(PARSE(&o, "-h"), CLI_HELP);
}

/* Each malformed command line is refused, and the message names what is wrong. */
Test(cli, refuses_malformed_flags)
{
    struct {
        const char *argv[3];
        int argc;
        const char *message;
    } cases[] = {
        {{"--bogus"}, 1, "unknown flag '--bogus'"},
        {{"--bogus=3"}, 1, "unknown flag '--bogus'"},
        {{"-n", "5"}, 2, "unexpected argument '-n'"},
        {{"1000"}, 1, "unexpected argument '1000'"},
        {{"--n"}, 1, "--n needs a value"},
        {{"--n", "abc"}, 2, "--n: expected a count from 1 to"},
        {{"--n", "0"}, 2, "--n: expected a count from 1 to"},
        {{"--sizes", "1K,,2K"}, 2, "--sizes: expected"},
        {{"--sizes", "1K,x"}, 2, "--sizes: expected"},
        {{"--range", "5"}, 2, "--range: expected LO:HI"},
        {{"--range", "5:"}, 2, "--range: expected LO:HI"},
        {{"--range", "10:5"}, 2, "--range: expected LO:HI"},
        {{"--range", "3:3"}, 2, "--range: expected LO:HI"},
        {{"--range", "nan:1"}, 2, "--range: expected LO:HI"},
        {{"--range", "-inf:0"}, 2, "--range: expected LO:HI"},
        {{"--dist", "gauss"}, 2, "--dist: expected uniform, normal, outliers or zipf"},
        {{"--iters", "0"}, 2, "--iters: expected"},
        {{"--iters", "5x"}, 2, "--iters: expected"},
        {{"--warmup", "-1"}, 2, "--warmup: expected"},
        {{"--iters", " 5"}, 2, "--iters: expected"},
        {{"--iters", "+5"}, 2, "--iters: expected"},
        {{"--warmup", "-0"}, 2, "--warmup: expected"},
        {{"--k", " 3"}, 2, "--k: expected"},
        {{"--seed", "-1"}, 2, "--seed: expected a whole number from 0 to 18446744073709551615, got '-1'"},
        {{"--seed", " -1"}, 2, "--seed: expected a whole number from 0 to 18446744073709551615, got ' -1'"},
        {{"--seed", "+1"}, 2, "--seed: expected"},
        {{"--seed", "18446744073709551616"}, 2, "--seed: expected"},
        {{"--range", " 1:2"}, 2, "--range: expected LO:HI"},
        {{"--range", "1: 2"}, 2, "--range: expected LO:HI"},
        {{"--csv", ""}, 2, "--csv needs a file name"},
        {{"--rows", "8"}, 2, "--rows and --cols go together"},
        {{"--cols", "0"}, 2, "--cols: expected a count from 1 to"},
        {{"--rows", "8", "--cols"}, 3, "--cols needs a value"},
        {{"--csv", "--sample"}, 2, "--csv needs a file name, got the flag '--sample' (a file named so: ./--sample)"},
        {{"--input", "--help"}, 2, "--input needs a file name, got the flag '--help'"},
        {{"--output", "--k", "5"}, 3, "--output needs a file name, got the flag '--k'"},
        {{"--range", "-1e308:1e308"}, 2, "--dist uniform would draw numbers past float32's largest"},
        {{"--range", "0:1e39"}, 2, "--dist uniform would draw numbers past float32's largest"},
        {{"--dist=outliers", "--range", "1e38:3e38"}, 3, "--dist outliers would draw numbers past float32's largest"},
        {{"--range", "-3e38:3e38", "--dist=normal"}, 3, "--dist normal would draw numbers past float32's largest"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_options o;
        const char *argv[4] = {"run", cases[i].argv[0], cases[i].argv[1], cases[i].argv[2]};
        cr_expect_eq(parse(&o, cases[i].argc + 1, argv), CLI_ERROR, "case %zu was accepted", i);
        cr_expect(strstr(err, cases[i].message) != NULL, "case %zu: message '%s' lacks '%s'", i, err,
                  cases[i].message);
        cr_expect(strchr(err, '\n') == NULL, "case %zu: message is more than one line", i);
    }
}

Test(cli, parses_rows_and_cols)
{
    cli_options o;
    cr_assert_eq(PARSE(&o, "--rows", "8K", "--cols=50257"), CLI_OK, "%s", err);
    cr_expect_eq(o.rows, 8000);
    cr_expect_eq(o.cols, 50257);
    cr_expect_eq(PARSE(&o, "--rows", "8", "--cols", "8", "--n", "5"), CLI_ERROR);
    cr_expect(strstr(err, "not both") != NULL, "%s", err);
}

/* The bounds of cli.h: 2^31 - 1 rows, 256 x (2^31 - 1) elements, each accepted and one past it
 * refused, with a message that says the bound. */
Test(cli, bounds_of_a_shape)
{
    cli_options o;
    cr_assert_eq(PARSE(&o, "--n", "549755813632"), CLI_OK, "%s", err);
    cr_expect_eq(o.sizes[0], CLI_MAX_ELEMENTS);
    cr_assert_eq(PARSE(&o, "--rows", "2147483647", "--cols", "256"), CLI_OK, "%s", err);
    cr_expect_eq(o.rows, CLI_MAX_ROWS);
    cr_assert_eq(PARSE(&o, "--rows", "1", "--cols", "549755813632"), CLI_OK, "%s", err);

    const struct {
        const char *argv[4];
        const char *message;
    } refused[] = {
        {{"--n", "549755813633"}, "--n: expected a count from 1 to 549755813632, like 1000, 10K or 1e6, got '549755813633'"},
        {{"--n", "4611686018427387904"}, "--n: expected a count from 1 to 549755813632"},
        {{"--sizes", "1K,1e12"}, "--sizes: expected up to 32 counts from 1 to 549755813632"},
        {{"--rows", "2147483648", "--cols", "1"}, "--rows: expected a count from 1 to 2147483647, like 8192 or 4K, got '2147483648'"},
        {{"--rows", "16", "--cols", "1152921504606846976"}, "--cols: expected a count from 1 to 549755813632"},
        {{"--rows", "2147483647", "--cols", "257"},
         "--rows x --cols: 2147483647 x 257 is more than 549755813632 elements (a block per 256 of them, at most 2^31 - 1 blocks)"},
        {{"--rows", "4294967296", "--cols", "4294967296"}, "--rows: expected a count from 1 to 2147483647"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        const int argc = refused[i].argv[2] ? 5 : 3;
        const char *argv[5] = {"run", refused[i].argv[0], refused[i].argv[1], refused[i].argv[2], refused[i].argv[3]};
        cr_expect_eq(parse(&o, argc, argv), CLI_ERROR, "case %zu was accepted", i);
        cr_expect_eq(strncmp(err, refused[i].message, strlen(refused[i].message)), 0, "case %zu: %s", i, err);
    }
    cr_expect(cli_shape_fits(CLI_MAX_ROWS, 256));
    cr_expect_not(cli_shape_fits(CLI_MAX_ROWS + 1, 1));
    cr_expect_not(cli_shape_fits(2, CLI_MAX_ELEMENTS / 2 + 1));
    cr_expect_not(cli_shape_fits((size_t)1 << 32, (size_t)1 << 32), "the product wraps to 0");
}

Test(cli, refuses_too_many_sizes)
{
    char list[256] = "1";
    for (int i = 1; i <= CLI_MAX_SIZES; i++)
        strcat(list, ",1");
    cli_options o;
    cr_expect_eq(PARSE(&o, "--sizes", list), CLI_ERROR);
}

/* A file name that is -h, and --help given a value, are refused as "--csv --help" and "--sample=1"
 * are. */
Test(cli, help_as_a_value)
{
    cli_options o;
    static const char *const file_flags[] = {"--csv", "--input", "--output"};
    for (size_t i = 0; i < sizeof file_flags / sizeof file_flags[0]; i++) {
        cr_expect_eq(PARSE(&o, file_flags[i], "-h"), CLI_ERROR, "%s -h", file_flags[i]);
        char want[128];
        snprintf(want, sizeof want, "%s needs a file name, got the flag '-h' (a file named so: ./-h)", file_flags[i]);
        cr_expect_str_eq(err, want);
    }
    cr_expect_eq(PARSE(&o, "--help=1"), CLI_ERROR);
    cr_expect_str_eq(err, "--help takes no value");
    cr_expect_eq(PARSE(&o, "--csv=-h"), CLI_OK, "%s", err); /* with = the name is plain */
    cr_expect_str_eq(o.csv_path, "-h");
}

/* Every flag of every table, read from the tables themselves: --help lists it; one without a value
 * refuses one; one with a value refuses to go without; a number takes its bounds and refuses one past
 * them, with the message its table states. */
Test(cli, every_flag_of_every_table)
{
    cli_options o;
    const cli_table tables[] = {{cli_size_flags, &o}, {cli_shape_flags, &o}, {cli_shared_flags, &o},
                                {topk_flags, &t}};
    char *help = NULL;
    size_t help_len = 0;
    FILE *h = open_memstream(&help, &help_len);
    cr_assert_not_null(h);
    cli_print_help(h, "about", tables, 4);
    cr_assert_eq(fclose(h), 0);
    int flags = 0;
    for (int i = 0; i < 4; i++)
        for (const cli_flag *f = tables[i].flags; f->name; f++, flags++) {
            char listed[80];
            snprintf(listed, sizeof listed, "\n  %s%s", f->name, f->metavar ? " " : "");
            cr_expect(strstr(help, listed) != NULL, "--help does not list %s", f->name);
            const char *argv[3] = {"run", f->name, NULL};
            if (!f->metavar) {
                char with_value[80];
                snprintf(with_value, sizeof with_value, "%s=1", f->name);
                argv[1] = with_value;
                cr_expect_eq(parse(&o, 2, argv), CLI_ERROR, "%s", with_value);
                continue;
            }
            cr_expect_eq(parse(&o, 2, argv), CLI_ERROR, "%s without a value", f->name);
            if (f->parse != cli_int && f->parse != cli_u64 && f->parse != cli_count)
                continue;
            char value[32], expected[256], message[400];
            snprintf(value, sizeof value, "%llu", f->lo ? f->lo : 1);
            argv[2] = value;
            const bool shaped = tables[i].flags == cli_shape_flags; /* --rows goes with --cols */
            if (!shaped)
                cr_expect_eq(parse(&o, 3, argv), CLI_OK, "%s %s: %s", f->name, value, err);
            if (f->hi == UINT64_MAX)
                snprintf(value, sizeof value, "18446744073709551616");
            else
                snprintf(value, sizeof value, "%llu", f->hi + 1);
            snprintf(expected, sizeof expected, f->expects, f->lo, f->hi);
            snprintf(message, sizeof message, "%s: expected %s, got '%s'", f->name, expected, value);
            cr_expect_eq(parse(&o, 3, argv), CLI_ERROR, "%s %s", f->name, value);
            cr_expect_str_eq(err, message);
        }
    cr_expect_geq(flags, 19, "the tables hold %d flags", flags);
    cr_expect(strstr(help, "\n  --help ") != NULL);
    free(help);
}

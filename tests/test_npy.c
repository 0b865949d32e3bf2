/* The .npy reader and writer: files as np.save writes them; the header read by the grammar of
 * numpy's format (npy.c), with what numpy also reads accepted or refused by name; each refusal one
 * printable line; the shape's sizes checked before anything is allocated; and the file's fault
 * (NPY_BAD_FILE) told apart from the machine's (NPY_HOST_FAILED). Every case goes through the
 * reader from memory and from a file, which must agree, and through the fuzzer's checks. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../06_fused_topk/host/npy.h"
#include "fuzz/oracle.h"
#include "npy_test.h"

static char *temp_path(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/npy-test-%d-%s", (int)getpid(), name);
    return path;
}

void save_npy(const char *path, const char *descr, size_t elem_size, const size_t *shape, int ndim, const void *data)
{
    char err[256];
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(npy_write(f, descr, elem_size, shape, ndim, data, err, sizeof err), 0, "%s", err);
    cr_assert_eq(fclose(f), 0, "%s", path);
}

static void write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* Room for a header past numpy's limit and some data. */
#define FILE_MAX (NPY_MAX_HEADER + 4096)

/* A .npy file in buf: version major.0, then the dict, padded with spaces and ended by a newline
 * as np.save pads it (to a multiple of 64 bytes) or, with pad false, as it is, then data_bytes
 * bytes of data counting up from 0. Returns the file's length. */
static size_t make_npy(unsigned char *buf, int major, const char *dict, bool pad, size_t data_bytes)
{
    const size_t preamble = major == 1 ? 10 : 12;
    size_t len = strlen(dict);
    cr_assert_lt(preamble + len + 64 + data_bytes, FILE_MAX);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major, buf[7] = 0;
    memcpy(buf + preamble, dict, len);
    while (pad && (preamble + len + 1) % 64)
        buf[preamble + len++] = ' ';
    if (pad)
        buf[preamble + len++] = '\n';
    for (size_t i = 0; i < preamble - 8; i++)
        buf[8 + i] = (unsigned char)(len >> (8 * i));
    for (size_t i = 0; i < data_bytes; i++)
        buf[preamble + len + i] = (unsigned char)i;
    return preamble + len + data_bytes;
}

/* Reads the n bytes from memory and from a file: both must return the same and say the same,
 * and keep the reader's contract (fuzz/oracle.h). Returns what they returned; *a holds what was
 * read from memory (the caller frees it), err the message. */
static int judge(const unsigned char *bytes, size_t n, npy_logits *a, char *err, size_t err_len)
{
    int rc;
    const char *broken = npy_run(bytes, n, a, &rc, err, err_len);
    cr_assert_null(broken, "%s: %s", broken, err);
    const char *path = temp_path("judged.npy");
    write_bytes(path, bytes, n);
    npy_logits b;
    char file_err[700] = "";
    cr_assert_leq(err_len, sizeof file_err);
    cr_assert_eq(npy_read_logits(path, &b, file_err, err_len), rc, "from a file: %s", file_err);
    cr_assert_str_eq(file_err, err);
    if (rc == 0)
        cr_assert_arr_eq(b.data, a->data, a->rows * a->cols * dtype_size(a->dtype));
    npy_logits_free(&b);
    remove(path);
    return rc;
}

/* Caps this process's address space at what it has mapped now plus `room` bytes, so that any
 * larger allocation fails at once. Returns the limit to put back. */
static struct rlimit cap_address_space(size_t room)
{
    struct rlimit old, cap;
    size_t pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert(f && fscanf(f, "%zu", &pages) == 1, "no /proc/self/statm");
    fclose(f);
    cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
    cap = (struct rlimit){.rlim_cur = pages * (size_t)sysconf(_SC_PAGESIZE) + room, .rlim_max = old.rlim_max};
    cr_assert_eq(setrlimit(RLIMIT_AS, &cap), 0);
    return old;
}

Test(npy, float32_round_trip_and_numpy_header_layout)
{
    const float x[2 * 3 * 4] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, 0.5f};
    const size_t shape[3] = {2, 3, 4};
    char err[256];
    const char *path = temp_path("f32.npy");
    save_npy(path, "<f4", 4, shape, 3, x);

    /* The header is the one np.save writes: version 1.0, the dict, padded to 64 bytes. */
    char head[129] = {0};
    FILE *f = fopen(path, "rb");
    cr_assert_eq(fread(head, 1, 128, f), 128);
    fclose(f);
    char want[129];
    snprintf(want, sizeof want, "%-117s\n", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }");
    cr_expect_str_eq(head + 10, want, "byte for byte what np.save writes");

    npy_logits a;
    cr_assert_eq(npy_read_logits(path, &a, err, sizeof err), 0, "%s", err);
    cr_expect_eq(a.dtype, DTYPE_F32);
    cr_expect_eq(a.ndim, 3);
    cr_expect_eq(a.rows, 6);
    cr_expect_eq(a.cols, 4);
    cr_expect_arr_eq(a.data, x, sizeof x);
    npy_logits_free(&a);

    /* The header alone: the same dtype and shape, no data read. */
    npy_file file;
    cr_assert_eq(npy_open_logits(path, &file, &a, err, sizeof err), 0, "%s", err);
    npy_close(&file);
    cr_expect(a.dtype == DTYPE_F32 && a.ndim == 3 && a.rows == 6 && a.cols == 4 && a.data == NULL);
    cr_assert_eq(truncate(path, 100), 0); /* shorter than its shape: the header alone still judges it */
    cr_expect_eq(npy_open_logits(path, &file, &a, err, sizeof err), NPY_BAD_FILE);
    npy_close(&file);
    remove(path);
}

/* A shape whose bytes do not fit a size_t is refused, and nothing is written. */
Test(npy, write_refuses_a_shape_past_size_max)
{
    const size_t shape[2] = {(size_t)1 << 62, 4};
    char err[256];
    FILE *out = tmpfile();
    cr_assert_not_null(out);
    cr_expect_eq(npy_write(out, "<f4", 4, shape, 2, NULL, err, sizeof err), -1);
    cr_expect_str_eq(err, "an array of shape (4611686018427387904, 4) needs more than 18446744073709551615 bytes "
                          "(SIZE_MAX)");
    cr_expect_eq(ftell(out), 0);
    fclose(out);
}

/* A header this writer cannot hold whole, too many dimensions or too long an element type, is
 * refused, and nothing is written. */
Test(npy, write_refuses_a_header_it_cannot_hold)
{
    const size_t shape[5] = {2, 3, 4, 5, 6};
    char err[256], descr[200];
    memset(descr, 'x', sizeof descr - 1);
    descr[sizeof descr - 1] = '\0';
    FILE *out = tmpfile();
    cr_assert_not_null(out);
    cr_expect_eq(npy_write(out, "<f4", 4, shape, 0, NULL, err, sizeof err), -1);
    cr_expect_str_eq(err, "an array of 0 dimensions: this writer takes 1 to 3");
    cr_expect_eq(npy_write(out, "<f4", 4, shape, 5, NULL, err, sizeof err), -1);
    cr_expect_str_eq(err, "an array of 5 dimensions: this writer takes 1 to 3");
    cr_expect_eq(npy_write(out, descr, 4, shape, 3, NULL, err, sizeof err), -1);
    cr_expect_str_eq(err, "an element type of 199 characters makes the header of an array of shape (2, 3, 4) longer "
                          "than 192 bytes");
    cr_expect_eq(ftell(out), 0);
    fclose(out);
}

Test(npy, one_dimension_keeps_its_trailing_comma)
{
    const int v[5] = {1, 2, 3, 4, 5};
    const size_t shape[1] = {5};
    char head[129] = {0};
    const char *path = temp_path("1d.npy");
    save_npy(path, "<i4", 4, shape, 1, v);
    FILE *f = fopen(path, "rb");
    cr_assert_eq(fread(head, 1, 128, f), 128);
    fclose(f);
    cr_expect(strstr(head + 10, "'shape': (5,), }") != NULL, "%s", head + 10);
    remove(path);
}

Test(npy, sixteen_bit_logits_as_numpy_and_ml_dtypes_write_them)
{
    static const struct {
        const char *descr;
        logit_dtype dtype;
    } types[] = {{"<f2", DTYPE_F16}, {"<V2", DTYPE_BF16}, {"|V2", DTYPE_BF16}};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        unsigned char buf[FILE_MAX];
        char dict[128], err[700];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 4), }", types[t].descr);
        npy_logits a;
        cr_assert_eq(judge(buf, make_npy(buf, 1, dict, true, 16), &a, err, sizeof err), 0, "%s: %s", dict, err);
        cr_expect_eq(a.dtype, types[t].dtype, "%s", dict);
        cr_expect_eq(a.rows, 2);
        npy_logits_free(&a);
    }
}

/* Each of these numpy writes or reads, and so does this reader: [2, 3] float32. */
Test(npy, headers_numpy_reads_are_read)
{
    static const struct {
        int major;
        const char *dict;
    } cases[] = {
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
        {1, "{'descr':\t'<f4', 'fortran_order':\tFalse, 'shape':\t(2, 3)}"},
        {1, "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}"},
        {1, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}"},
        {1, " \t{'descr' : '<f4' ,\n 'fortran_order'\f:False,\r\n'shape':( 2 ,3 , ) , }"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }"},
        {2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }"},
        {2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
        {3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char buf[FILE_MAX];
        char err[700];
        npy_logits a;
        const size_t n = make_npy(buf, cases[i].major, cases[i].dict, true, 24);
        cr_expect_eq(judge(buf, n, &a, err, sizeof err), 0, "version %d %s: %s", cases[i].major, cases[i].dict, err);
        cr_expect(a.dtype == DTYPE_F32 && a.rows == 2 && a.cols == 3, "%s", cases[i].dict);
        npy_logits_free(&a);
    }
}

Test(npy, a_header_as_long_as_numpy_reads_and_no_longer)
{
    static char dict[NPY_MAX_HEADER + 2];
    static unsigned char buf[FILE_MAX];
    const char *text = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    for (size_t len = NPY_MAX_HEADER; len <= NPY_MAX_HEADER + 1; len++) {
        memset(dict, ' ', len);
        memcpy(dict, text, strlen(text));
        dict[len - 1] = '\n';
        dict[len] = '\0';
        char err[700];
        npy_logits a;
        const int rc = judge(buf, make_npy(buf, 1, dict, false, 24), &a, err, sizeof err);
        if (len == NPY_MAX_HEADER)
            cr_expect_eq(rc, 0, "%s", err);
        else
            cr_expect_str_eq(err, "its header is 10001 bytes, more than numpy reads (10000)");
        npy_logits_free(&a);
    }
}

/* The file of this header and data is refused with NPY_BAD_FILE and a line holding `message`. */
static void expect_refused(int major, const char *dict, size_t data_bytes, const char *message)
{
    unsigned char buf[FILE_MAX];
    char err[700];
    npy_logits a;
    cr_expect_eq(judge(buf, make_npy(buf, major, dict, true, data_bytes), &a, err, sizeof err), NPY_BAD_FILE,
                 "%s", dict);
    cr_expect(strstr(err, message) != NULL, "%s:\n  got  %s\n  want %s", dict, err, message);
}

Test(npy, malformed_shapes_are_refused_naming_what_is_wrong)
{
    static const struct {
        const char *shape;
        size_t data_bytes;
        const char *message;
    } cases[] = {
        {"(6,)", 24, "its shape has 1 dimension(s); expected [B,T,V] or [R,V]"},
        {"()", 4, "its shape has 0 dimension(s)"},
        {"(1, 1, 2, 3)", 24, "its shape has 4 dimension(s)"},
        {"(6)", 24, "where ',' (one dimension is written (V,)) should be"},
        {"[2, 3]", 24, "where a tuple such as (8, 50257) should be"},
        {"(2, 0)", 0, "its shape (2, 0) has a dimension of length 0: there are no logits"},
        {"(0x2, 3)", 24, "'0x2, 3), }' at byte 61 where a dimension in decimal digits should be"},
        {"(02, 3)", 24, "'02, 3), }' at byte 61 where a dimension"},
        {"(-2, 3)", 24, "'-2, 3), }' at byte 61 where a dimension"},
        {"(2_0, 3)", 240, "'2_0, 3), }' at byte 61 where a dimension"},
        {"(2l, 3)", 24, "'2l, 3), }' at byte 61 where a dimension"},
        {"(2, 99999999999999999999)", 24, "its shape has a dimension at byte 64 larger than 18446744073709551615"},
        {"(1, 2147483648)", 24, "its rows have 2147483648 logits (V), more than the kernels' limit of 2^31 - 1"},
        {"(1, 2147483647)", 24, "its shape needs 8589934588 bytes of data, the file has 24"},
        {"(2147483648, 2)", 24, "its 2147483648 rows of 2 logits are more than the kernels take (at most 2147483647 "
                                "rows, 549755813632 logits in all)"},
        {"(1024, 1024, 1048576)", 24, "its 1048576 rows of 1048576 logits are more than the kernels take"},
        {"(4294967296, 4294967296, 1)", 24,
         "its shape (4294967296, 4294967296, 1) needs more than 18446744073709551615 bytes (SIZE_MAX)"},
        {"(2, 3)", 23, "its shape needs 24 bytes of data, the file has 23"},
        {"(2, 3)", 25, "its shape needs 24 bytes of data, the file has 25"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", cases[i].shape);
        expect_refused(1, dict, cases[i].data_bytes, cases[i].message);
    }
    expect_refused(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", 24,
                   "'2L, 3L), }' at byte 63 where a dimension in decimal digits should be");
}

Test(npy, malformed_dicts_are_refused_naming_what_is_wrong)
{
    static const struct {
        const char *dict, *message;
    } cases[] = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
         "its element type '<f8' is not float32 ('<f4'), float16 ('<f2') or bfloat16 ('<V2')"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", "its element type '>f4'"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }",
         "where a quoted element type such as '<f4' should be"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
         "Fortran order is not supported: save np.ascontiguousarray(x) instead"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }", "where True or False should be"},
        {"{'descr': '<f4', 'fortran_order': Falsehood, 'shape': (2, 3), }", "where True or False should be"},
        {"{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
         "its header has 'descr' twice (again at byte 27)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1, }",
         "its header has the key 'x' at byte 68; numpy's format has only 'descr', 'fortran_order' and 'shape'"},
        {"{'fortran_order': False, 'shape': (2, 3), }", "its header has no 'descr'"},
        {"{'descr': '<f4', 'shape': (2, 3), }", "its header has no 'fortran_order'"},
        {"{'descr': '<f4', 'fortran_order': False, }", "its header has no 'shape'"},
        {"{'descr': '\\x3cf4', 'fortran_order': False, 'shape': (2, 3), }",
         "its header has the string ''\\\\x3cf4', 'fortran_order...' at byte 20, with a backslash escape, "
         "which this reader does not decode"},
        {"{'descr': '<f\n4', 'fortran_order': False, 'shape': (2, 3), }",
         "its header has the string ''<f\\x0a4', 'fortran_order':...' at byte 20, not closed on its line"},
        {"{'descr': '<' 'f4', 'fortran_order': False, 'shape': (2, 3), }", "where ',' or '}' should be"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3),, }", "where a quoted key such as 'shape' should be"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} # a comment",
         "its header has '# a comment' at byte 68 where the padding (spaces and a newline) should be"},
        {"\n{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", "at byte 10 where '{' should be"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_refused(1, cases[i].dict, 24, cases[i].message);
}

Test(npy, a_header_that_does_not_end_with_its_newline_is_refused)
{
    unsigned char buf[FILE_MAX];
    char err[700];
    npy_logits a;
    const size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }    ", false, 24);
    cr_expect_eq(judge(buf, n, &a, err, sizeof err), NPY_BAD_FILE);
    cr_expect_str_eq(err, "its header does not end with a newline, as the format requires");
}

Test(npy, files_that_are_not_npy_files)
{
    static const struct {
        const char *bytes;
        size_t n;
        const char *message;
    } cases[] = {
        {"", 0, "it does not start like a .npy file"},
        {"PK\3\4 not a npy file", 20, "it does not start like a .npy file"},
        {"\x93NUMPY", 6, "its header is cut short"},
        {"\x93NUMPY\x01\x00\x76", 9, "its header is cut short"},
        {"\x93NUMPY\x01\x01\x76\x00{}", 12, "its format version 1.1 is not one numpy reads (1.0, 2.0 or 3.0)"},
        {"\x93NUMPY\x04\x00\x76\x00\x00\x00{}", 14, "its format version 4.0 is not one numpy reads"},
        {"\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order'", 40, "its header is cut short: 30 of its 118 bytes"},
        {"\x93NUMPY\x02\x00\x76\x00\x00\x00{'descr'", 19, "its header is cut short: 7 of its 118 bytes"},
        {"\x93NUMPY\x02\x00\x76\x00\x00\x01{'descr'", 19, "its header is 16777334 bytes, more than numpy reads (10000)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[700];
        npy_logits a;
        cr_expect_eq(judge((const unsigned char *)cases[i].bytes, cases[i].n, &a, err, sizeof err), NPY_BAD_FILE);
        cr_expect(strstr(err, cases[i].message) != NULL, "case %zu: %s", i, err);
    }
    char err[700];
    npy_logits a;
    cr_expect_eq(npy_read_logits("/nonexistent/x.npy", &a, err, sizeof err), NPY_BAD_FILE);
    cr_expect_str_eq(err, "cannot read it: No such file or directory");
    cr_expect_eq(npy_read_logits("/tmp", &a, err, sizeof err), NPY_BAD_FILE);
    cr_expect_str_eq(err, "it is not a regular file (a directory or a pipe?)");
}

/* A pipe is refused at once, not read from once something writes to it. */
Test(npy, a_pipe_is_refused_without_waiting_for_a_writer)
{
    const char *path = temp_path("fifo.npy");
    cr_assert_eq(mkfifo(path, 0600), 0);
    char err[700];
    npy_logits a;
    const int rc = npy_read_logits(path, &a, err, sizeof err);
    remove(path);
    cr_expect_eq(rc, NPY_BAD_FILE);
    cr_expect_str_eq(err, "it is not a regular file (a directory or a pipe?)");
}

/* A file that cannot be opened because the process has no descriptor left is the machine's fault,
 * not the file's. */
Test(npy, too_many_open_files_is_the_machines_fault)
{
    const char *path = temp_path("one-byte.npy");
    write_bytes(path, "x", 1);
    struct rlimit old;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
    const struct rlimit none = {0, old.rlim_max};
    char err[700];
    npy_logits a;
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &none), 0);
    const int rc = npy_read_logits(path, &a, err, sizeof err);
    setrlimit(RLIMIT_NOFILE, &old);
    remove(path);
    cr_expect_eq(rc, NPY_HOST_FAILED, "%s", err);
    cr_expect_str_eq(err, "cannot read it: Too many open files");
}

Test(npy, what_a_message_quotes_from_the_file_is_escaped_and_cut_short)
{
    static const struct {
        const char *dict, *message;
    } cases[] = {
        {"{'descr': '\x1b[2J\x1b[31m<f4\xff', 'fortran_order': False, 'shape': (2, 3), }",
         "its element type '\\x1b[2J\\x1b[31m<f4\\xff' is not float32"},
        {"{'de\tscr\x01': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "the key 'de\\x09scr\\x01' at byte 11"},
        {"{'descr': 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'fortran_order': False, 'shape': (2, 3), }",
         "its element type 'AAAAAAAAAAAAAAAAAAAAAAAA...' is not"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char buf[FILE_MAX];
        char err[700];
        npy_logits a;
        cr_expect_eq(judge(buf, make_npy(buf, 1, cases[i].dict, true, 24), &a, err, sizeof err), NPY_BAD_FILE);
        cr_expect(strstr(err, cases[i].message) != NULL, "got %s", err);
    }
    /* A buffer shorter than the message keeps its start, still one printable line. */
    unsigned char buf[FILE_MAX];
    char err[16];
    npy_logits a;
    cr_expect_eq(judge(buf, make_npy(buf, 1, cases[0].dict, true, 24), &a, err, sizeof err), NPY_BAD_FILE);
    cr_expect_str_eq(err, "its element typ");
}

/* A shape whose leading dimensions multiply to 2 modulo 2^64, so that in wrapped 64-bit arithmetic
 * it is 2 rows of 16 float32, exactly the file's 128 bytes of data; and one that does not wrap but
 * claims 4 TiB: with the address space capped, an allocation of either would fail, and neither is
 * tried: the header and the file's length refuse them first. */
Test(npy, huge_shapes_are_the_files_fault_found_before_any_allocation)
{
    static const struct {
        const char *dict, *message;
    } cases[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (68689669285, 1091126539866, 16), }",
         "its shape (68689669285, 1091126539866, 16) needs more than 18446744073709551615 bytes (SIZE_MAX)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }",
         "its 1048576 rows of 1048576 logits are more than the kernels take (at most 2147483647 rows, 549755813632 "
         "logits in all)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (262144, 1048576), }",
         "its shape needs 1099511627776 bytes of data, the file has 128"},
    };
    const struct rlimit old = cap_address_space(256u << 20);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char buf[FILE_MAX];
        char err[700];
        npy_logits a;
        cr_expect_eq(judge(buf, make_npy(buf, 1, cases[i].dict, true, 128), &a, err, sizeof err), NPY_BAD_FILE);
        cr_expect_str_eq(err, cases[i].message);
    }
    setrlimit(RLIMIT_AS, &old);
}

/* A valid header for 1 GiB of float32 at the head of a sparse file of the right length, read with
 * the address space capped below 1 GiB: the allocation fails, and that is the machine's fault. */
Test(npy, out_of_host_memory_is_the_machines_fault)
{
    unsigned char buf[FILE_MAX];
    const size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 268435456), }", true, 0);
    const char *path = temp_path("gib.npy");
    write_bytes(path, buf, n);
    cr_assert_eq(truncate(path, (off_t)(n + (1u << 30))), 0);
    char err[700];
    npy_logits a;
    const struct rlimit old = cap_address_space(256u << 20);
    const int rc = npy_read_logits(path, &a, err, sizeof err);
    setrlimit(RLIMIT_AS, &old);
    remove(path);
    cr_expect_eq(rc, NPY_HOST_FAILED, "%s", err);
    cr_expect_str_eq(err, "out of host memory for its 1073741824 bytes of data");
    cr_expect_null(a.data);
}

/* A per-row vector must have one value a row: a header claiming 500,000,000 of them for 4 rows, at
 * the head of a sparse 2 GB file of the right length, is refused from the header with the address
 * space capped (so no allocation for its data was even tried); one of the right length is read. */
Test(npy, a_vector_of_another_length_is_refused_from_its_header)
{
    unsigned char buf[FILE_MAX];
    const size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (500000000,), }", true, 0);
    const char *path = temp_path("big-vector.npy");
    write_bytes(path, buf, n);
    cr_assert_eq(truncate(path, (off_t)(n + 2000000000u)), 0);
    char err[700];
    npy_vector v;
    const struct rlimit old = cap_address_space(256u << 20);
    const int rc = npy_read_vector(path, "<f4", 4, &v, err, sizeof err);
    setrlimit(RLIMIT_AS, &old);
    cr_expect_eq(rc, NPY_BAD_FILE, "%s", err);
    cr_expect_str_eq(err, "it has 500000000 values and the logits 4 rows: give one a row");
    cr_expect(v.n == 0 && v.data == NULL);

    const int ks[4] = {1, 2, 3, 4};
    const size_t four[1] = {4};
    save_npy(path, "<i4", 4, four, 1, ks);
    cr_expect_eq(npy_read_vector(path, "<i4", 3, &v, err, sizeof err), NPY_BAD_FILE);
    cr_expect_str_eq(err, "it has 4 values and the logits 3 rows: give one a row");
    cr_assert_eq(npy_read_vector(path, "<i4", 4, &v, err, sizeof err), 0, "%s", err);
    cr_expect_eq(v.n, 4);
    cr_expect_arr_eq(v.data, ks, sizeof ks);
    free(v.data);
    remove(path);
}

/* What a writer might do to a file between the reader's look at its header and its read of the
 * data: cut it inside the data, cut it inside the header (already read), extend it, rewrite it in
 * place (its time of last write moved, as a write moves it). */
static void cut_in_the_data(const char *path) { cr_assert_eq(truncate(path, 20000), 0); }
static void cut_in_the_header(const char *path) { cr_assert_eq(truncate(path, 64), 0); }
static void extend(const char *path)
{
    FILE *f = fopen(path, "ab");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite("more", 1, 4, f), 4);
    cr_assert_eq(fclose(f), 0);
}
static void rewrite_in_place(const char *path)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    const struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = st.st_mtim.tv_sec + 1}};
    cr_assert_eq(utimensat(AT_FDCWD, path, times, 0), 0);
}

/* Each change made after npy_open_logits read the header and before npy_read_data reads the data,
 * as a writer's timing could make it during npy_read_logits: one answer, the file's fault, whether
 * the read ended early or came out whole. Untouched, the same file is read. The data (32 KiB) is
 * longer than what the header's read takes, so a cut file ends under the data's read. */
Test(npy, a_file_changed_while_it_is_read_is_the_files_fault)
{
    enum { ROWS = 2, V = 4096 };
    static float x[ROWS * V];
    for (int i = 0; i < ROWS * V; i++)
        x[i] = (float)i;
    const size_t shape[2] = {ROWS, V};
    const char *path = temp_path("changing.npy");
    static const struct {
        void (*change)(const char *path);
        const char *what;
    } changes[] = {{cut_in_the_data, "cut in the data"}, {cut_in_the_header, "cut in the header"},
                   {extend, "extended"}, {rewrite_in_place, "rewritten in place"}, {NULL, "left as it was"}};
    for (size_t i = 0; i < sizeof changes / sizeof changes[0]; i++) {
        save_npy(path, "<f4", 4, shape, 2, x);
        char err[700] = "";
        npy_file file;
        npy_logits a;
        cr_assert_eq(npy_open_logits(path, &file, &a, err, sizeof err), 0, "%s: %s", changes[i].what, err);
        cr_expect(a.rows == ROWS && a.cols == V && a.data == NULL, "%s", changes[i].what);
        if (changes[i].change)
            changes[i].change(path);
        const int rc = npy_read_data(&file, &a, err, sizeof err);
        npy_close(&file);
        if (changes[i].change) {
            cr_expect_eq(rc, NPY_BAD_FILE, "%s: %s", changes[i].what, err);
            cr_expect_str_eq(err, "the file changed while it was being read", "%s", changes[i].what);
            cr_expect_null(a.data, "%s", changes[i].what);
        } else {
            cr_assert_eq(rc, 0, "%s: %s", changes[i].what, err);
            cr_expect_arr_eq(a.data, x, sizeof x);
        }
        npy_logits_free(&a);
    }
    remove(path);
}

# Shared by the per-stage table scripts (plots/NN_*.awk). Reads one CSV written by a stage program
# with --csv: its '# key: value' lines become meta["key"], the first other line names the columns,
# and every later line is row r, read as val[r, "column"]. The stage script prints blocks in its
# END rule; plots/splice.awk puts each block between its markers in EXPERIMENTS.md.

BEGIN { FS = "," }
/^# / {
    line = substr($0, 3)
    k = index(line, ": ")
    meta[substr(line, 1, k - 1)] = substr(line, k + 2)
    next
}
ncols == 0 { for (i = 1; i <= NF; i++) col[i] = $i; ncols = NF; next }
{
    if (NF != ncols) { printf "%s:%d: %d fields, the header has %d\n", FILENAME, FNR, NF, ncols > "/dev/stderr"; exit 1 }
    nrows++
    for (i = 1; i <= NF; i++) val[nrows, col[i]] = $i
}

# Starts the block that replaces <!-- BEGIN name --> ... <!-- END name --> in EXPERIMENTS.md.
function block(name) { print "@@ " name }

# Where the numbers came from: GPU, CUDA, date, ceiling, command.
function setup_block(name, csv) {
    block(name)
    print "Measured on **" meta["gpu"] "**, CUDA " meta["cuda"] ", " meta["date"] "; ceiling in the same run: " meta["ceiling"] "."
    print "Command: `" meta["command"] "` (data: [" csv "](" csv "))."
}

# 1000 -> 1K, 100000000 -> 100M (as the programs print sizes).
function count(n,    k, s) {
    s = ""
    for (k = 0; k < 3 && n >= 1000 && n % 1000 == 0; k++) n /= 1000
    return n substr("KMG", k, k > 0)
}

function num(x, f) { return (x == "nan" || x == "inf" || x == "-inf") ? x : sprintf(f, x) }

# The rows r whose column c equals v, as a list "r1 r2 ..." for split().
function rows_where(c, v,    r, out) {
    out = ""
    for (r = 1; r <= nrows; r++) if (val[r, c] == v) out = out " " r
    return out
}

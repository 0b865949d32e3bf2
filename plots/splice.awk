# Usage: awk -v used=FILE -f plots/splice.awk BLOCKS PAGE.md > new.md (run by plots/make_plots.sh)
# BLOCKS holds "@@ name" lines, each followed by that block's text; blocks of the same name are
# joined in order. Each <!-- BEGIN name --> ... <!-- END name --> region of the Markdown is
# replaced by its block, and its name appended to FILE (make_plots.sh checks that every block went
# to some page). Markers without a block are an error; the rest of the page passes unchanged.
FNR == NR {
    if (/^@@ /) { name = substr($0, 4); text[name] = text[name]; next }
    text[name] = text[name] $0 "\n"
    next
}
/^<!-- BEGIN [^ ]+ -->$/ {
    name = $3
    if (!(name in text)) { print FILENAME ": no data for block " name > "/dev/stderr"; failed = 1 }
    printf "%s\n%s", $0, text[name]
    if (used != "") print name >> used
    skipping = 1
    next
}
/^<!-- END [^ ]+ -->$/ { skipping = 0; print; next }
!skipping { print }
END { exit failed }

# Usage: awk -f plots/splice.awk BLOCKS PAGE.md > new.md (PAGE: EXPERIMENTS or README)
# BLOCKS holds "@@ name" lines, each followed by that block's text; blocks of the same name are
# joined in order. Each <!-- BEGIN name --> ... <!-- END name --> region of the Markdown is
# replaced by its block. A block without markers, or markers without a block, is an error.
FNR == NR {
    if (/^@@ /) { name = substr($0, 4); if (!(name in text)) order[++nblocks] = name; text[name] = text[name]; next }
    text[name] = text[name] $0 "\n"
    next
}
/^<!-- BEGIN [^ ]+ -->$/ {
    name = $3
    if (!(name in text)) { print FILENAME ": no data for block " name > "/dev/stderr"; failed = 1 }
    printf "%s\n%s", $0, text[name]
    used[name] = 1
    skipping = 1
    next
}
/^<!-- END [^ ]+ -->$/ { skipping = 0; print; next }
!skipping { print }
END {
    for (i = 1; i <= nblocks; i++)
        if (!(order[i] in used)) { print FILENAME ": no markers for block " order[i] > "/dev/stderr"; failed = 1 }
    exit failed
}

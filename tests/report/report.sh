#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# leash report from the command line: formats, files written whole or not at
# all, one self-contained HTML file, hostile strings and hostile report
# directories (a symlink or a FIFO planted among the reports), bad input.
set -u
: "${LEASH:?}" "${LEASH_SRCDIR:?}"
F=$LEASH_SRCDIR/tests/unit/fixtures/report
T=$(mktemp -d "${TMPDIR:-/tmp}/leash-report.XXXXXX")
trap 'rm -rf "$T"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

"$LEASH" report "$F/oom.json" "$F/oom.csv" >"$T/text" 2>"$T/err"
check "text: exit 0" test $? = 0
check "text: the verdict first" grep -q "^verdict: memory. Reached its memory limit (256 MiB, enforced by cgroup)" "$T/text"
check "text: no raw control byte from the report" test "$(tr -d '\n\t' <"$T/text" | LC_ALL=C grep -c '[[:cntrl:]]')" = 0
check "text: the escape is shown, not sent" grep -qF '\x1b[31m' "$T/text"
check "text: a sparkline per series" grep -q '^ current .*|.*| max 256 MiB' "$T/text"

"$LEASH" report -o "$T/job.html" "$F/oom.json" "$F/oom.jsonl"
check "-o job.html: HTML by its extension" grep -q '^<!DOCTYPE html>' "$T/job.html"
check "HTML: self-contained (no src=, no stylesheet link, no url(), no @import)" \
        test "$(grep -cE 'src=|<link|url\(|@import' "$T/job.html")" = 0
check "HTML: the only http is the SVG namespace" \
        test "$(grep -o 'http[s]*://[^"]*' "$T/job.html" | sort -u)" = "http://www.w3.org/2000/svg"
check "HTML: a Content-Security-Policy that forbids fetching anything" grep -q "default-src 'none'" "$T/job.html"
check "HTML: the hostile command is escaped" grep -qF '&lt;script&gt;alert(1)&lt;/script&gt;' "$T/job.html"
check "HTML: dark mode and phone width" grep -q 'prefers-color-scheme:dark' "$T/job.html"
check "HTML: charts are accessible (title, desc, aria-labelledby)" \
        grep -q '<svg[^>]*role="img"[^>]*aria-labelledby="memory-t memory-d"' "$T/job.html"

"$LEASH" report --markdown -o "$T/md/job.md" "$F/oom.json" "$F/oom.csv" 2>"$T/err"
check "markdown into a missing directory: exit 125" test $? = 125
check "... and nothing written" test ! -e "$T/md"
mkdir "$T/md"
"$LEASH" report --markdown -o "$T/md/job.md" "$F/oom.json" "$F/oom.csv"
check "markdown: the document and five SVG charts beside it" test "$(ls "$T/md" | tr '\n' ' ')" = \
        "job-cpu.svg job-io.svg job-memory.svg job-pids.svg job-pressure.svg job.md "
check "markdown: links the charts" grep -q '](job-memory.svg)' "$T/md/job.md"
check "markdown: the SVG files are XML with their own dark-mode style" \
        grep -q 'prefers-color-scheme' "$T/md/job-memory.svg"
if command -v xmllint >/dev/null; then
        check "markdown: the SVG files are well-formed XML" xmllint --noout "$T/md/job-memory.svg"
fi
"$LEASH" report --markdown "$F/oom.json" >/dev/null 2>"$T/err"
check "markdown without -o: exit 125" test $? = 125

# A report directory the jobs could write to: a symlink to a report elsewhere
# and a FIFO are passed over, the FIFO never blocks.
mkdir "$T/dir"
cp "$F/oom.json" "$T/dir/a.json"
cp "$F/oom.json" "$T/dir/b.json"
ln -s "$F/oom.json" "$T/dir/link.json"
mkfifo "$T/dir/fifo.json"
timeout 20 "$LEASH" report -o "$T/many.html" "$T/dir" 2>"$T/err"
check "directory: exit 0 despite the planted files" test $? = 0
check "directory: the symlink and the FIFO are named and skipped" \
        test "$(grep -c 'not a regular file, skipped' "$T/err")" = 2
check "directory: a summary of the two real reports" grep -q '<h1>leash report: 2 jobs</h1>' "$T/many.html"
check "directory: sortable, with sort keys" grep -q 'class="sortable"' "$T/many.html"

echo '{"schema": 1, "reason": "ok"' >"$T/bad.json"
"$LEASH" report "$T/bad.json" >/dev/null 2>"$T/err"
check "broken report: exit 125, one line naming it" \
        test $? = 125 -a "$(cat "$T/err")" = "leash: $T/bad.json: not JSON"
echo '{"schema": 1, "reason": "ok", "usage": {}}' >"$T/r.json"
printf 't_s,a\n0,1\n1,zz\n' >"$T/r.csv"
"$LEASH" report "$T/r.json" "$T/r.csv" >/dev/null 2>"$T/err"
check "broken series: exit 125 naming the file and line" grep -q "r.csv:3: not a time series row" "$T/err"
"$LEASH" report "$T/r.json" "$T/nope.csv" >/dev/null 2>"$T/err"
check "missing series: exit 125" test $? = 125
"$LEASH" report -o "$T/out.html" "$T/r.json" "$T/r.csv" 2>/dev/null
check "... and no output file left" test ! -e "$T/out.html"
"$LEASH" report --bogus "$T/r.json" >/dev/null 2>"$T/err"
check "unknown option: exit 125" test $? = 125
check "no temporary files left beside outputs" test -z "$(find "$T" -name '*.XXXXXX' -o -name '*.html.*' -o -name '*.md.*')"

echo "1..$n"
[ $failed = 0 ]

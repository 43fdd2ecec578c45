#!/bin/sh
# End-to-end Wikidata build of a generated dump, with peak RSS and timestamped stage logs.
#   bench/wikidata_scale.sh DUMP OUT [more build options]
# Writes OUT.log (timestamped log lines) and OUT.time (GNU time -v); stage seconds are in
# OUT/manifest.json, the knowledge base's size in the "kb: ..." log line.
set -eu
dump=$1; out=$2; shift 2
rm -rf "$out"
/usr/bin/time -v -o "$out.time" python -m irbgen -v build --source wikidata-dump --dump "$dump" --offline \
    --out "$out" -q "$@" 2>&1 | while IFS= read -r line; do printf '%s %s\n' "$(date +%T)" "$line"; done > "$out.log"
grep -E "Maximum resident|Elapsed" "$out.time"

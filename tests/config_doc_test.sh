#!/usr/bin/env bash
# config_doc_test.sh BUILD_DIR [--write] — the environment variables Motor reads have one table,
# MPC_CONFIG_VARIABLES in mpc/mpc_config.h (name, default, meaning), and:
#   - docs/reference.md's list of them (between the config_doc_test markers) is what that table
#     prints: the header alone is compiled into a program that prints the Markdown rows. With
#     --write the list in the page is replaced by the printed one instead of compared.
#   - every read goes through the table: no C source of the library names a MOTOR_ variable in a
#     string (so none reads one with getenv) outside mpc_config.h, nothing but mpc/config.c calls
#     getenv with a computed name, and every MOTOR_ name in System.MP's C# is a row of the table.
set -u
build=$1
write=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
page=$src/docs/reference.md
begin='<!-- config_doc_test: begin (generated from mpc/mpc_config.h) -->'
end='<!-- config_doc_test: end -->'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# 1. the table, printed: one row per variable; an empty default reads as unset
cat >"$work/print.c" <<'C'
#include "mpc_config.h"

#include <stdio.h>

int main(void)
{
    puts("| variable | default | meaning |");
    puts("|---|---|---|");
#define ROW(id, name, fallback, meaning)                                                           \
    printf("| `%s` | %s%s%s | %s |\n", name, *fallback ? "`" : "", *fallback ? fallback : "unset", \
           *fallback ? "`" : "", meaning);
    MPC_CONFIG_VARIABLES(ROW)
    return 0;
}
C
if ! cc -std=c11 -Wall -Wextra -Werror -I"$src/mpc" "$work/print.c" -o "$work/print" \
    >"$work/cc.txt" 2>&1; then
    echo "FAIL: mpc_config.h does not compile alone:"; cat "$work/cc.txt"; exit 1
fi
"$work/print" >"$work/table.md"
names=$(sed -nE 's/^\| `(MOTOR_[A-Z0-9_]+)` .*/\1/p' "$work/table.md")

# 2. the page's list
if [ "$(grep -cxF "$begin" "$page")" -ne 1 ] || [ "$(grep -cxF "$end" "$page")" -ne 1 ]; then
    echo "FAIL: docs/reference.md needs exactly one '$begin' line and one '$end' line"; exit 1
fi
awk -v b="$begin" -v e="$end" '$0 == e { on = 0 } on { print } $0 == b { on = 1 }' "$page" \
    >"$work/page.md"
if [ "$write" = --write ]; then
    awk -v b="$begin" -v e="$end" -v t="$work/table.md" '
        $0 == b { print; while ((getline line < t) > 0) print line; skip = 1; next }
        $0 == e { skip = 0 }
        !skip { print }' "$page" >"$work/new.md" && cp "$work/new.md" "$page"
    echo "config_doc_test: docs/reference.md's list of variables rewritten from mpc_config.h"
elif ! diff "$work/page.md" "$work/table.md" >"$work/diff"; then
    fail "docs/reference.md's list of variables is not mpc_config.h's table" \
         "(< page, > table; bash tests/config_doc_test.sh $build --write rewrites it):"
    cat "$work/diff"
fi

# 3. every read through the table. The library's C: every folder of the core (not tests, bench,
# samples), so that a layer added later is covered too.
cd "$src"
c_sources=$(git ls-files -- '*.c' '*.h' 2>/dev/null | grep -vE '^(tests|bench|samples|build)/' ||
            find . -name '*.[ch]' -not -path './tests/*' -not -path './bench/*' \
                -not -path './samples/*' -not -path './build*' | sed 's|^\./||')
[ -n "$c_sources" ] || { echo "FAIL: no C sources found"; exit 1; }
named=$(grep -nE '"MOTOR_[A-Z0-9_]*' $c_sources | grep -v '^mpc/mpc_config\.h:')
if [ -n "$named" ]; then
    fail "a MOTOR_ variable named outside mpc/mpc_config.h (read it with mpc_config_string or" \
         "mpc_config_seconds):"
    echo "$named"
fi
computed=$(grep -nE '\bgetenv[[:space:]]*\([[:space:]]*[^"[:space:]]' $c_sources |
           grep -vE '^mpc/config\.c:|^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)')
if [ -n "$computed" ]; then
    fail "getenv of a computed name outside mpc/config.c (a MOTOR_ variable could hide there):"
    echo "$computed"
fi
# System.MP reads what it must before the core is loaded (MOTOR_CORE): only the table's names
cs_sources=$(find bindings/csharp -name '*.cs' 2>/dev/null)
for n in $(grep -ohE '"MOTOR_[A-Z0-9_]+"' $cs_sources | tr -d '"' | sort -u); do
    grep -qx "$n" <<<"$names" || fail "System.MP names $n, which is not in mpc_config.h's table"
done

[ $failed -eq 0 ] && echo "config_doc_test: $(wc -w <<<"$names") variables; docs/reference.md" \
    "lists them as mpc_config.h does, and every read goes through the table"
exit $failed

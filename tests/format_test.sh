#!/usr/bin/env bash
# format_test.sh BUILD_DIR — the code is laid out as .clang-format says (C: the core, host,
# tests, benchmarks and samples; C#: the binding, tests, benchmarks and samples, as far as
# .clang-format's C# section covers them), and no line of C or C# is longer than 100 columns.
# Fix with: bash tests/format_test.sh --fix
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
fmt=$(command -v clang-format-14 || command -v clang-format) || {
    echo "FAIL: clang-format-14 is not installed (scripts/install-deps.sh --test installs it)"
    exit 1
}
c_files=$(ls mpc/*.[ch] object_model/*.[ch] gc_hooks/*.[ch] transfer/*.[ch] serializer/*.[ch] \
             opi/*.[ch] host/*.c tests/c/*.c tests/fuzz/*.c bench/*.[ch] bench/native/*.[ch] \
             samples/*/*.c 2>/dev/null)
cs_files=$(find bindings tests/csharp bench samples -name '*.cs' 2>/dev/null | sort)
if [ "${1:-}" = "--fix" ]; then
    "$fmt" -i $c_files $cs_files
    exit 0
fi
failed=0
for f in $c_files $cs_files; do
    if ! "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "FAIL: $f is not laid out as .clang-format says (bash tests/format_test.sh --fix)"
        failed=$((failed + 1))
    fi
done
long=$(awk 'length > 100 { print FILENAME ":" FNR ": " length " columns" }' $c_files $cs_files)
if [ -n "$long" ]; then
    echo "FAIL: lines longer than 100 columns:"
    echo "$long" | head -20
    failed=$((failed + 1))
fi
echo "format: $(wc -w <<<"$c_files") C and $(wc -w <<<"$cs_files") C# files, $failed failure(s)"
[ "$failed" -eq 0 ]

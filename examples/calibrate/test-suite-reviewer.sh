#!/bin/sh
# A model-free reviewer: the project's test suite.
#
#   revcal calibrate --scorer repro \
#       --review-cmd 'TEST_CMD="cargo test --offline -q" examples/calibrate/test-suite-reviewer.sh {base}'
#
# It runs TEST_CMD in the planted tree. When the tests fail, it reports every line the change
# under review touched (git diff BASE, test files aside) with TEST_CMD as the repro command;
# the repro scorer then credits a line only when TEST_CMD passes on the original code and fails
# with that line's planted bug alone. Its recall is the share of planted bugs the tests kill.
# Output: {"findings": [{"file", "line", "title", "repro"}]}. Needs only sh, git and awk.
set -u
base=${1:-HEAD}
test_cmd=${TEST_CMD:-cargo test --offline -q}

if sh -c "$test_cmd" >/dev/null 2>&1; then
    echo '{"findings": []}'
    exit 0
fi

git diff -U0 --no-color --no-ext-diff "$base" | awk -v repro="$test_cmd" '
    function json(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
    /^\+\+\+ b\// { file = substr($0, 7); next }
    /^@@ / {
        if (file ~ /(^|\/)(tests?|__tests__)\// || file ~ /(_test\.|\.test\.|\.spec\.|(^|\/)test_)/) next
        split($3, range, ","); start = substr(range[1], 2) + 0
        count = (range[2] == "") ? 1 : range[2] + 0
        if (count == 0) { count = 1; if (start == 0) start = 1 }
        for (i = 0; i < count; i++) {
            out = out sep "{\"file\": " json(file) ", \"line\": " (start + i) \
                ", \"title\": \"the tests fail and this changed line is implicated\", \"repro\": " json(repro) "}"
            sep = ",\n  "
        }
    }
    END { print "{\"findings\": [\n  " out "\n]}" }
'

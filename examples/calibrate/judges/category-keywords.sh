#!/bin/sh
# A crude keyword judge for `--judge-cmd`: it matches when the finding's text uses a word that
# belongs to the planted defect's category ("off by one", "boundary" for off-by-one, "null",
# "None" for null-handling, ...). It shows the protocol with nothing but a shell; a real judge
# asks an LLM (see docs/findings.md).
#
#   revcal calibrate --review-cmd ./my-reviewer.sh --scorer judge \
#       --judge-cmd 'sh examples/calibrate/judges/category-keywords.sh'
set -eu

request=$(cat)
category=$(printf '%s' "$request" | sed -n 's/.*"category":"\([^"]*\)".*/\1/p')
text=$(printf '%s' "$request" | sed -n 's/.*"finding":{.*"text":"\(.*\)","evidence":.*/\1/p')

case "$category" in
    off-by-one)        keywords='off by one|off-by-one|boundary|<=|>=|one too|past the end' ;;
    logic-inversion)   keywords='invert|negat|opposite|== |!=|always true|always false' ;;
    null-handling)     keywords='null|none|nil|undefined|missing check|unwrap' ;;
    arithmetic)        keywords='arithmetic|sign|plus|minus|multipl|divid|overflow' ;;
    boundary)          keywords='boundary|empty|zero|limit|edge case' ;;
    error-handling)    keywords='error|exception|swallow|ignored|raise|throw' ;;
    return-value)      keywords='return' ;;
    resource-cleanup)  keywords='leak|close|release|drop|cleanup' ;;
    statement-deletion) keywords='removed|missing|deleted|no longer|never' ;;
    *)                 keywords='' ;;
esac

if [ -n "$keywords" ] && printf '%s' "$text" | grep -Eiq -- "$keywords"; then
    echo '{"match": true}'
else
    echo '{"match": false}'
fi

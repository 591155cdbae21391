#!/bin/sh
# A judge for --judge-cmd: revcal writes one JSON request on stdin
#   {"plant": {"file", "line", "category", "operator", "defect", "original", "mutated"},
#    "finding": {"file", "line", "text", "evidence"}}
# and expects {"match": true} or {"match": false} on stdout. Anything else is an error, never a
# match. LLM_CMD reads a prompt on stdin and prints the model's answer.
set -eu
llm=${LLM_CMD:?set LLM_CMD to a command that reads a prompt on stdin}
request=$(cat)
answer=$(printf 'Does the FINDING describe the planted DEFECT (same bug, not merely the same line)?\nAnswer with exactly {"match": true} or {"match": false}.\n\n%s\n' "$request" | sh -c "$llm")
case "$answer" in
    *'"match": true'* | *'"match":true'*) echo '{"match": true}' ;;
    *'"match": false'* | *'"match":false'*) echo '{"match": false}' ;;
    *) echo "the model answered neither: $answer" >&2; exit 1 ;;
esac

#!/bin/sh
# A deterministic, model-free judge for `revcal calibrate --scorer judge --judge-cmd`.
#
# It answers {"match": true} when the finding's text contains the planted defect's sentence
# (what an oracle reviewer says), and {"match": false} otherwise (a finding that only points at
# the line or quotes it, as the echo control does). Use it to check the pipeline end to end
# without an LLM:
#
#   revcal calibrate --review-cmd ./my-reviewer.sh --scorer judge \
#       --judge-cmd 'sh examples/calibrate/judges/defect-sentence.sh'
#
# Protocol: one JSON request on stdin (compact, fields in this order):
#   {"plant":{"file":..,"line":..,"category":..,"operator":..,"defect":..,"original":..,"mutated":..},
#    "finding":{"file":..,"line":..,"text":..,"evidence":..}}
# and exactly one JSON object on stdout: {"match": true} or {"match": false}.
# Anything else (no JSON, a non-zero exit, no answer in time) counts as an error, never a match.
set -eu

request=$(cat)

# The defect sentence and the finding text, still JSON-escaped; comparing the escaped forms is
# exact because both come from the same encoder.
defect=$(printf '%s' "$request" | sed -n 's/.*"defect":"\(.*\)","original":".*/\1/p')
text=$(printf '%s' "$request" | sed -n 's/.*"finding":{.*"text":"\(.*\)","evidence":.*/\1/p')

if [ -n "$defect" ] && [ -n "$text" ]; then
    case "$text" in
        *"$defect"*) echo '{"match": true}'; exit 0 ;;
    esac
fi
echo '{"match": false}'

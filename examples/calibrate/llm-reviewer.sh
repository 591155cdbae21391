#!/bin/sh
# Wiring an LLM reviewer: give it the change, ask for findings as JSON, print what it says.
#
#   revcal calibrate --review-cmd 'examples/calibrate/llm-reviewer.sh {base}' \
#       --judge-cmd examples/calibrate/llm-judge.sh --min-recall 0.6
#
# LLM_CMD is any command that reads a prompt on stdin and prints the model's answer, e.g.
# `llm -m gpt-4o-mini`, `ollama run qwen2.5-coder`, `claude -p`. revcal reads the answer in any
# findings format it knows (JSON in a Markdown fence and surrounding chatter is fine).
# revcal withholds its provider variables from the reviewer: pass the one LLM_CMD reads its
# key from by name, e.g. `--reviewer-env OPENAI_API_KEY`.
set -eu
base=${1:-HEAD}
llm=${LLM_CMD:?set LLM_CMD to a command that reads a prompt on stdin, e.g. LLM_CMD="llm -m gpt-4o-mini"}

{
    cat <<'PROMPT'
You are reviewing a code change. Report every bug you find: wrong results, off-by-one
errors, inverted conditions, missing error handling. Answer with JSON only:
{"findings": [{"file": "path", "line": 12, "title": "one line", "body": "what is wrong and why"}]}
The diff:
PROMPT
    git diff --no-color --no-ext-diff "$base"
} | sh -c "$llm"

#!/bin/sh
# The reviewer that approves everything: the floor every real reviewer must beat.
#   revcal calibrate --review-cmd examples/calibrate/lgtm-reviewer.sh --scorer repro \
#       --plants-file examples/calibrate/plants.yaml
echo "LGTM: looks good to me."

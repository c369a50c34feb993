#!/bin/sh
# The long crash-survival run: the CI test CrashSurvival.* with many SIGKILLs on a big tree.
#
#   bench/reliability/crash_long.sh TREE [KILLS] [BUILD_DIR] [SEED]
# TREE e.g. from ../shared/bench/mktree.py (200k-1M entries); KILLS default 20. The test prints
# its seed (replay with SEED) and one JSON line of figures.
set -eu
tree=${1:?usage: crash_long.sh TREE [KILLS] [BUILD_DIR] [SEED]}
kills=${2:-20}
build=${3:-build}
export WSINDEX_REL_TREE="$tree" WSINDEX_REL_KILLS="$kills"
[ -n "${4:-}" ] && export WSINDEX_REL_SEED="$4"
start=$(date +%s)
"$build/bin/wsindex_reliability_tests" --gtest_filter='CrashSurvival.*'
echo "{\"wall_s\":$(( $(date +%s) - start )),\"loadavg\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"

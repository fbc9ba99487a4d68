#!/bin/sh
# test/mpich-suite-hosts4.sh - MPICH's coll and pt2pt suites with every job
# split into 4 emulated hosts (test/mpich-suite-hosts.sh has 2): ranks in
# consecutive blocks, a job of fewer ranks than hosts has one host a rank.
GLEX_SUITE_SPLIT=4 exec sh "$(dirname "$0")/mpich-suite-hosts.sh"

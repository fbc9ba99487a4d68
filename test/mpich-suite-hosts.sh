#!/bin/sh
# test/mpich-suite-hosts.sh - MPICH's coll and pt2pt suites (test/mpich-suite.sh)
# with every job split into 2 emulated hosts (GLEX_SPLIT_HOSTS=2: each half of
# the ranks in a segment of its own, everything between the halves over
# libfabric; a 1-rank test has one host), or GLEX_SUITE_SPLIT hosts
# (test/mpich-suite-hosts4.sh: 4).  SKIP without libfabric.
prefix=${GLEX_MPI_PREFIX:?set GLEX_MPI_PREFIX}
if ! strings "$prefix/lib/libmpi.so" 2>/dev/null | grep -q "fi_getinfo"; then
  echo "1..0 # SKIP MPICH's ch4:glex was built without libfabric"
  exit 0
fi
GLEX_SPLIT_HOSTS=${GLEX_SUITE_SPLIT:-2} exec sh "$(dirname "$0")/mpich-suite.sh"

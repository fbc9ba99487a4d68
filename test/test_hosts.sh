#!/bin/sh
# test_hosts.sh - a job across emulated hosts (doc/multinode.md): the
# engine tests again with GLEX_SPLIT_HOSTS=2 and 4, every packet, credit,
# pulse, RDMA and MP message between the blocks of ranks through libfabric
# (tcp;ofi_rxm on this machine), each block with a segment of its own.
# SKIP where libglex was built without libfabric.
bin=${top_builddir:-.}
if ! grep -q "GLEX_HAVE_LIBFABRIC" "$bin/Makefile" 2>/dev/null; then
  echo "1..0 # SKIP libglex built without libfabric (configure --without-libfabric)"
  exit 0
fi
n=0 fail=0
# run TEST HOSTS ARGS...: renumber its TAP lines into this script's
run() {
  t=$1 h=$2; shift 2
  out=$(GLEX_SPLIT_HOSTS=$h "$bin/test/$t" "$@" 2>/tmp/glex-hosts.$$.err)
  rc=$?
  while IFS= read -r line; do
    case $line in
      "ok "*) n=$((n+1)); echo "ok $n - hosts=$h $t: ${line#* - }" ;;
      "not ok "*) n=$((n+1)); fail=$((fail+1)); echo "not ok $n - hosts=$h $t: ${line#* - }" ;;
    esac
  done <<END
$out
END
  if [ $rc != 0 ]; then sed 's/^/# /' /tmp/glex-hosts.$$.err | tail -20; fi
  n=$((n+1))
  if [ $rc = 0 ]; then echo "ok $n - hosts=$h $t exits 0"; else echo "not ok $n - hosts=$h $t exits $rc"; fail=$((fail+1)); fi
}
run test_emu 2
run test_coll 2 2 3 5
run test_coll 4 4 6
run test_concurrency 2
run test_repro 3
# eager data between hosts: the sender's partition of the receiver's eager
# pages fills, the later messages ask for credit (test_failure's eager case)
run test_failure 2 eager
rm -f /tmp/glex-hosts.$$.err
echo "1..$n"
[ $fail = 0 ]

#!/bin/sh
# Regenerate the build system.  Needs autoconf, automake, libtool, pkg-config.
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
autoreconf -fi
# automake's TAP driver, used by 'make check' to count every test case
cp "$(automake --print-libdir)/tap-driver.sh" build-aux/

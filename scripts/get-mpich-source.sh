#!/bin/sh
# get-mpich-source.sh - obtain MPICH's release tarball as Debian's orig tarball
# of source package 'mpich' (4.0.2 on Debian 12).
#
# usage: scripts/get-mpich-source.sh [DESTDIR]     (default: ~/.cache/glex/src)
# Prints the tarball's path on the last line.  Needs root (it adds a deb-src
# stanza and runs apt-get update) unless deb-src lines are already enabled.
# The stanza is derived from the machine's own apt configuration
# (/etc/apt/sources.list.d/debian.sources: same URIs, Suites, Components).
# Where this is impossible, download mpich-4.0.2.tar.gz yourself and pass it
# to configure with --with-mpich-source=PATH.
set -eu
dest=${1:-${HOME:-/root}/.cache/glex/src}
mkdir -p "$dest"
found=$(ls "$dest"/mpich_*.orig.tar.* 2>/dev/null | head -1 || true)
if [ -n "$found" ]; then echo "$found"; exit 0; fi

die() {
  echo "get-mpich-source: $*" >&2
  echo "get-mpich-source: cannot fetch MPICH's source here; download the MPICH 4.0.2 release" >&2
  echo "  tarball (mpich-4.0.2.tar.gz) by other means and run configure with" >&2
  echo "  --with-mpich-source=/path/to/mpich-4.0.2.tar.gz (a tarball or an unpacked tree)." >&2
  exit 1
}
command -v apt-get >/dev/null || die "apt-get not found (not a Debian system)"
srcfile=/etc/apt/sources.list.d/glex-deb-src.sources
if ! apt-get source --download-only --print-uris mpich >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || die "deb-src lines are not enabled and this is not root (run as root once)"
  main=/etc/apt/sources.list.d/debian.sources
  if [ -f "$main" ]; then
    # copy every 'Types: deb' stanza as 'Types: deb-src'
    awk 'BEGIN{RS=""; ORS="\n\n"} /(^|\n)Types:[^\n]*deb([ \n]|$)/ {
           gsub(/Types:[^\n]*/, "Types: deb-src"); print }' "$main" > "$srcfile"
  elif [ -f /etc/apt/sources.list ]; then
    sed -n 's/^deb \(.*\)$/deb-src \1/p' /etc/apt/sources.list > /etc/apt/sources.list.d/glex-deb-src.list
  else
    die "no apt sources found to derive a deb-src line from"
  fi
  apt-get update -qq >/dev/null 2>&1 || die "apt-get update failed"
fi
cd "$dest"
apt-get source --download-only mpich >/dev/null 2>&1 || die "apt-get source --download-only mpich failed"
found=$(ls "$dest"/mpich_*.orig.tar.* 2>/dev/null | head -1 || true)
[ -n "$found" ] || die "no orig tarball among the downloaded files"
echo "$found"

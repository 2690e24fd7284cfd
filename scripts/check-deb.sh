#!/usr/bin/env bash
# The Debian package, as CI checks it (needs root): `make deb` (the release build),
# lintian-clean, installed with dpkg -i (files, conffile, the unit enabled and verified,
# the installed config loads, the manual pages found), removed (the conffile stays, as
# policy says) and purged (nothing left). Refuses to run where serializerd is already
# installed as a package: it never touches an installation it did not make.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-release}
fail() { echo "check-deb: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "check-deb: skipped (dpkg -i needs root)"; exit 0; }
if dpkg-query -W -f='${Status}' serializerd 2>/dev/null | grep -q installed; then
  fail "a serializerd package is already installed here; remove it first"
fi
arch=$(dpkg --print-architecture)
version=$(dpkg-parsechangelog -S Version)
deb="serializerd_${version}_${arch}.deb"
rm -f "$deb"

echo "== make deb (BUILD=$BUILD)"
SERIALIZERD_BUILD=$BUILD make -s deb >/dev/null
[ -f "$deb" ] || fail "make deb did not write $deb"
trap 'dpkg -P serializerd >/dev/null 2>&1 || true; rm -f "$deb"' EXIT

echo "== lintian --fail-on error,warning"
report=$(lintian --fail-on error,warning "$deb" 2>&1) || { echo "$report" >&2; fail "lintian reports errors or warnings (above)"; }

echo "== dpkg -i"
dpkg -i "$deb" >/dev/null
for f in /usr/bin/serializerd /lib/systemd/system/serializerd.service /lib/systemd/system/serializerd.socket \
         /etc/serializerd/serializerd.yaml /usr/share/man/man1/serializerd.1.gz /usr/share/man/man5/serializerd.yaml.5.gz \
         /usr/share/bash-completion/completions/serializerd /usr/share/zsh/vendor-completions/_serializerd \
         /usr/share/fish/vendor_completions.d/serializerd.fish /usr/share/doc/serializerd/README.md; do
  [ -e "$f" ] || fail "the package did not install $f"
done
dpkg-query -W -f='${Conffiles}\n' serializerd | grep -q '/etc/serializerd/serializerd.yaml' || fail "the config is not a conffile"
[ -L /etc/systemd/system/multi-user.target.wants/serializerd.service ] || fail "the service is not enabled"
[ ! -e /etc/systemd/system/sockets.target.wants/serializerd.socket ] || fail "the socket unit is enabled"
out=$(systemd-analyze verify --man=no /lib/systemd/system/serializerd.service 2>&1 || true)
[ -z "$out" ] || fail "systemd-analyze verify: $out"
/usr/bin/serializerd check --config /etc/serializerd/serializerd.yaml >/dev/null || fail "the installed config does not load"
grep -q '^tapes: { dir: /var/lib/serializerd/tapes }$' /etc/serializerd/serializerd.yaml || fail "the installed config keeps tapes elsewhere"
grep -q '^StateDirectory=serializerd$' /lib/systemd/system/serializerd.service || fail "the unit has no state directory for tapes"
man -w serializerd >/dev/null && man -w 5 serializerd.yaml >/dev/null || fail "man does not find serializerd(1) and serializerd.yaml(5)"
files=$(dpkg -L serializerd | grep -v '^/etc/' | while read -r f; do [ -f "$f" ] && echo "$f"; done)

echo "== dpkg -r"
dpkg -r serializerd >/dev/null
[ ! -e /usr/bin/serializerd ] || fail "dpkg -r left /usr/bin/serializerd"
[ -f /etc/serializerd/serializerd.yaml ] || fail "dpkg -r removed the conffile (policy keeps it until purge)"
dpkg-query -W -f='${db:Status-Abbrev}' serializerd | grep -q '^rc' || fail "the package is not in state rc after dpkg -r"

echo "== dpkg -P"
mkdir -p /var/lib/private/serializerd/tapes   # what the unit's StateDirectory would hold
dpkg -P serializerd >/dev/null
[ ! -e /etc/serializerd ] || fail "dpkg -P left /etc/serializerd"
[ ! -e /var/lib/private/serializerd ] && [ ! -e /var/lib/serializerd ] || fail "dpkg -P left the state directory"
[ ! -e /etc/systemd/system/multi-user.target.wants/serializerd.service ] || fail "dpkg -P left the service enabled"
for f in $files; do [ ! -e "$f" ] || fail "dpkg -P left $f"; done
! dpkg-query -W serializerd >/dev/null 2>&1 || fail "dpkg still knows serializerd after purge"
echo "check-deb: the package builds, lints clean, installs, removes and purges"

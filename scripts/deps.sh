#!/bin/sh
# Installs the Debian packages raidfs needs to build and test, when missing.
# Usage: scripts/deps.sh [--check] [PACKAGE...]
#   --check: exit 1 if something is missing; PACKAGEs: those instead of the
#   build's and tests' (make bench-deps passes the benchmark suite's)
set -eu
CHECK=
[ "${1:-}" = "--check" ] && { CHECK=1; shift; }

PKGS="build-essential pkg-config libisal-dev libxxhash-dev libfuse3-dev fuse3 \
libconfuse-dev libcmocka-dev uuid-dev libblkid-dev libmount-dev libudev-dev util-linux attr acl \
xxhash kmod xfsprogs btrfs-progs mdadm lvm2 fdisk e2fsprogs python3 procps \
libaio-dev libjson-c-dev python3-jsonschema man-db groff-base systemd libcap2-bin"
[ $# -eq 0 ] || PKGS="$*"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" \
		|| missing="$missing $p"
done

[ -z "$missing" ] && exit 0
[ -n "$CHECK" ] && { echo "missing packages:$missing"; exit 1; }

echo "raidfs: installing missing Debian packages:$missing"
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing

#!/bin/sh
# bench/deps.sh: installs what the benchmark suite compares raidfs with and
# measures it by (make bench-deps; as root), when missing.  The suite runs
# without any of them: a missing peer or tool is skipped with a message.
#   fio, bonnie++, dbench   the workloads;  time  CPU of a command
#   zfs-fuse, btrfs-progs   the peers (btrfs also needs the kernel's module)
#   libfuse3-dev, fuse3     the passthrough ceiling's source (its examples)
#   gnuplot-nox             the plots
set -eu
PKGS="fio bonnie++ dbench time zfs-fuse btrfs-progs libfuse3-dev fuse3 gnuplot-nox python3 util-linux"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" \
		|| missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "bench: installing missing Debian packages:$missing"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing

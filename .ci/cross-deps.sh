#!/usr/bin/env bash
# Installs what .ci/cross.sh needs on Debian 12 (amd64): qemu-user, Debian's cross gcc for
# aarch64, s390x and i686 with their libc, and the target builds of protobuf-c and cmocka
# (multiarch: dpkg --add-architecture arm64 s390x i386). clang comes with .ci/deps.sh --test.
# As root it runs dpkg/apt-get; otherwise it prints the commands to run and fails.
set -euo pipefail
arches=(arm64 s390x i386)
missing=()
need_pkg() { # package[:arch]...
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
}
need_pkg qemu-user clang \
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
	gcc-s390x-linux-gnu libc6-dev-s390x-cross \
	gcc-i686-linux-gnu libc6-dev-i386-cross
for a in "${arches[@]}"; do
	need_pkg "libprotobuf-c-dev:$a" "libcmocka-dev:$a"
done
[ ${#missing[@]} -eq 0 ] && exit 0

foreign=$(dpkg --print-foreign-architectures)
add=()
for a in "${arches[@]}"; do
	grep -qx "$a" <<<"$foreign" || add+=("$a")
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "cross-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	for a in "${add[@]}"; do dpkg --add-architecture "$a"; done
	# other apt clients on the machine may hold the lock for a while
	# a mirror caught mid-sync fails one index ("File has unexpected size"): go on with the
	# indexes apt has, so that the install below says plainly what it cannot find
	apt-get -o DPkg::Lock::Timeout=600 update -qq || echo "cross-deps: apt-get update reported errors (above); installing from the indexes it has" >&2
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
	echo "cross-deps: missing packages; run:" >&2
	for a in "${add[@]}"; do echo "  sudo dpkg --add-architecture $a" >&2; done
	[ ${#add[@]} -gt 0 ] && echo "  sudo apt-get update" >&2
	echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi

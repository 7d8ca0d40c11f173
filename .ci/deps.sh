#!/usr/bin/env bash
# Installs what onnxrun needs to build (and, with --test, to test) on Debian 12.
# As root it runs apt-get; otherwise it prints the one command to run and fails.
set -euo pipefail
want_tests=0
[ "${1:-}" = "--test" ] && want_tests=1

missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_pc() { pkg-config --exists "$1" 2>/dev/null || missing+=("$2"); }

need_cmd cmake cmake
need_cmd cc gcc
need_cmd make make
need_cmd pkg-config pkg-config
need_cmd protoc-c protobuf-c-compiler
if command -v pkg-config >/dev/null 2>&1; then
	need_pc libprotobuf-c libprotobuf-c-dev
	[ $want_tests = 1 ] && need_pc cmocka libcmocka-dev
else
	missing+=(libprotobuf-c-dev)
	[ $want_tests = 1 ] && missing+=(libcmocka-dev)
fi
[ -f /usr/include/onnx/onnx.proto ] || missing+=(libonnx-dev)
[ $want_tests = 1 ] && need_cmd valgrind valgrind
# The Python package stage (python/): Debian's Python 3 with its headers, setuptools, pip and
# numpy to build and install the package offline; pytest and onnx to test it; dask and
# distributed for the Dask example's test; mypy for the typing check. python3-torch is
# optional (its test is skipped without it) and not installed here: it is large.
need_deb() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed' || missing+=("$1")
}
if [ $want_tests = 1 ]; then
	for pkg in python3-dev python3-setuptools python3-pip python3-numpy python3-pytest python3-onnx \
		python3-dask python3-distributed python3-mypy; do
		need_deb "$pkg"
	done
fi
# The fuzzing stage: clang with its libFuzzer runtime (Debian 12: clang 14).
if [ $want_tests = 1 ]; then
	need_cmd clang clang
	compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a' >/dev/null ||
		missing+=(libclang-rt-14-dev)
fi

[ ${#missing[@]} -eq 0 ] && exit 0
# shellcheck disable=SC2207
missing=($(printf '%s\n' "${missing[@]}" | sort -u))
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# a mirror caught mid-sync fails one index ("File has unexpected size"): go on with the
	# indexes apt has, so that the install below says plainly what it cannot find
	apt-get update -qq || echo "deps: apt-get update reported errors (above); installing from the indexes it has" >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
	echo "deps: missing packages; run:" >&2
	echo "  sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi

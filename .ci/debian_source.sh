# Sourced by the dependency scripts of the builds for other targets (.ci/wasm_deps.sh,
# .ci/windows_deps.sh): unpacks Debian's own source packages, adding a deb-src entry when
# none is configured. The caller sets `deps` (folder of src/), `root` (1 when it may run
# apt-get as root) and `tag` (its message prefix).

# A deb-src line for every deb line of the system's sources (deb822 files and one-line lists).
enable_deb_src() {
	local out=/etc/apt/sources.list.d/onnxrun-deb-src.sources f
	if grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		return 0
	fi
	if [ "$root" = 0 ]; then
		echo "$tag: no deb-src entry for 'apt-get source'; as root, add one, e.g.:" >&2
		echo "  sed 's/^Types: deb\$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources" \
			"| sudo tee /etc/apt/sources.list.d/onnxrun-deb-src.sources && sudo apt-get update" >&2
		exit 1
	fi
	: >"$out"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ "$f" = "$out" ] && continue
		grep -q '^URIs:.*debian' "$f" || continue
		sed 's/^Types: deb$/Types: deb-src/' "$f" >>"$out"
		echo >>"$out"
	done
	if [ -f /etc/apt/sources.list ]; then
		grep -E '^deb .*debian' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
			>/etc/apt/sources.list.d/onnxrun-deb-src.list || true
	fi
	echo "$tag: added deb-src entries; apt-get update" >&2
	# a mirror caught mid-sync fails one index ("File has unexpected size"): go on with the
	# indexes apt has, so that the install below says plainly what it cannot find
	apt-get update -qq >&2 || echo "$tag: apt-get update reported errors (above); installing from the indexes it has" >&2
}

# Unpacks Debian's source of package $1 into $deps/src/$1-VERSION (once); prints that folder.
debian_source() {
	local pkg=$1 dir
	dir=$(ls -d "$deps/src/$pkg"-*/ 2>/dev/null | head -1 || true)
	if [ -z "$dir" ]; then
		enable_deb_src
		mkdir -p "$deps/src"
		(cd "$deps/src" && apt-get source -qq "$pkg" >/dev/null 2>&1) ||
			(apt-get update -qq && cd "$deps/src" && apt-get source -qq "$pkg" >/dev/null)
		dir=$(ls -d "$deps/src/$pkg"-*/ | head -1)
	fi
	echo "${dir%/}"
}

#!/usr/bin/env bash
# Installs what the browser tests (.ci/web.sh) need beyond the WebAssembly build's
# dependencies (.ci/wasm_deps.sh): Debian's chromium (headless, driven over the DevTools
# protocol) and the npm packages that tests/web/package.json names (puppeteer-core, typescript,
# onnxruntime-web, at the versions of tests/web/package-lock.json; `npm ci`, no install
# scripts). The npm tree goes to build-web/npm/, a build folder, so tests/ holds only the
# project's own files. As root the Debian package is installed; otherwise the command to run
# is printed and the script fails.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "web deps: installing ${need[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	else
		echo "web deps: missing packages; run:" >&2
		echo "  sudo apt-get install -y ${need[*]}" >&2
		exit 1
	fi
fi
# npm ci again when the lock file is newer than the installed tree
tools=build-web/npm
if [ ! -f $tools/node_modules/.package-lock.json ] ||
	[ tests/web/package-lock.json -nt $tools/node_modules/.package-lock.json ]; then
	echo "web deps: npm ci in $tools (tests/web's package.json and lock file)"
	mkdir -p $tools
	cp tests/web/package.json tests/web/package-lock.json $tools/
	(cd $tools && npm ci --ignore-scripts --no-audit --no-fund --silent)
fi
echo "web deps: $(chromium --version 2>/dev/null | head -1); $tools/node_modules ready"

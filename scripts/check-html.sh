#!/usr/bin/env bash
# Opens nsyssync's HTML report in headless Chromium and checks it: the
# screenshot must show the sites table and the timelines, and the DOM must
# hold no element made from the trace's text (report/chromium_test.go).
# Installs Debian's chromium package when it is absent.
#
#   scripts/check-html.sh [SCREENSHOT.png]
set -euo pipefail
cd "$(dirname "$0")/.."
shot=${1:-${NSYSSYNC_SCREENSHOT:-${TMPDIR:-/tmp}/nsyssync-report.png}}

if ! command -v chromium >/dev/null 2>&1; then
	echo "installing chromium (Debian package)" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
chromium --version

NSYSSYNC_SCREENSHOT="$shot" go test -count=1 -run 'Chromium' -v ./report/
echo "screenshot: $shot"

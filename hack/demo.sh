#!/usr/bin/env bash
# Shows catalogbot on the fixture catalogs: the valid one passes, the broken
# one fails with every planted error reported at once, and -o opm prints the
# single message opm itself stops at. `make demo` builds bin/catalogbot first.
#
# Exits 0 only if every step ended with the exit status it should.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${CATALOGBOT:-bin/catalogbot}
if [ ! -x "$bin" ]; then
	echo "demo: $bin not found; run 'make demo', which builds it" >&2
	exit 2
fi

failures=0

# step TITLE WANT CMD...: runs CMD and compares its exit status with WANT.
# A non-zero status is an expected outcome here, so it must not trip set -e.
step() {
	local title=$1 want=$2 rc=0
	shift 2
	printf '\n== %s\n$ %s\n' "$title" "$*"
	"$@" || rc=$?
	if [ "$rc" -eq "$want" ]; then
		printf -- '-> exit status %d, as expected\n' "$rc"
	else
		printf -- '-> exit status %d, expected %d\n' "$rc" "$want"
		failures=$((failures + 1))
	fi
}

step "A valid catalog" 0 \
	"$bin" validate testdata/catalogs/valid
step "A broken catalog: every error at once, each with file:line" 1 \
	"$bin" validate testdata/catalogs/broken
step "The same catalog as opm reports it: the first error only" 1 \
	"$bin" validate -o opm testdata/catalogs/broken

echo
if [ "$failures" -gt 0 ]; then
	echo "demo: $failures step(s) ended with an unexpected exit status" >&2
	exit 1
fi
echo "demo: every step ended as expected"

#!/usr/bin/env bash
# hack/backtest-measure.sh REPO [N]: replays the last N (default 150)
# first-parent commits of REPO that touched a catalog root through
# `catalogbot backtest`, under the community-operators-prod policy (the one
# line `conventions: operator-pipelines`: a catalog per catalogs/v*, ci.yaml
# reviewers and config.yaml maintainers), and prints a Markdown report:
# verdict counts, the fbc failures each cross-checked against opm's own
# verdict (operator-registry v1.65.0 through checks/fbc/conformance's
# cmd/refvalidate, run on the same package directories at the same
# commit), the release-guard findings, the time per commit (median, max)
# and the peak memory.
#
# REPO is a git repository (bare or not) with that layout, for example a
# clone of redhat-openshift-ecosystem/community-operators-prod. It is only
# read. The machine's figures depend on its load: run it on a quiet one.
#
# Environment:
#   BACKTEST_POLICY  the policy file (default:
#                    cmd/catalogbot/testdata/community-operators-prod.catalogbot.yaml)
#   BACKTEST_OUT     where the JSON report and the timings are kept
#                    (default: a temporary directory, printed at the end)
#   BACKTEST_REUSE   when set, report on the run already in BACKTEST_OUT
#                    rather than replaying again
#
# Needs go, git, jq and tar; GNU time (/usr/bin/time) for the peak memory,
# else the peak is read from /proc while the command runs.
set -euo pipefail

repo=${1:?usage: hack/backtest-measure.sh REPO [N]}
n=${2:-150}
here=$(cd "$(dirname "$0")/.." && pwd)
policy=${BACKTEST_POLICY:-$here/cmd/catalogbot/testdata/community-operators-prod.catalogbot.yaml}
out=${BACKTEST_OUT:-$(mktemp -d)}
mkdir -p "$out"

for tool in go git jq tar; do
	command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done

(cd "$here" && go build -o "$out/catalogbot" ./cmd/catalogbot)
# opm's own build tags, so that no gpgme is needed (see the Makefile).
(cd "$here/checks/fbc/conformance" && CGO_ENABLED=0 go build -tags json1,containers_image_openpgp -o "$out/refvalidate" ./cmd/refvalidate)

# Exit status 1 only says that some commit's content checks failed.
if [ -n "${BACKTEST_REUSE:-}" ] && [ -s "$out/backtest.json" ]; then
	reuse=1
else
	reuse=""
fi
run=("$out/catalogbot" backtest --repo "$repo" --last "$n" --policy "$policy" -o json)
peak_kb=""
start=$(date +%s.%N)
if [ -n "$reuse" ]; then
	peak_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time.txt" 2>/dev/null || echo 0)
	start=$(date +%s.%N)
elif [ -x /usr/bin/time ]; then
	/usr/bin/time -v -o "$out/time.txt" "${run[@]}" >"$out/backtest.json" || [ $? -eq 1 ]
	peak_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time.txt")
else
	"${run[@]}" >"$out/backtest.json" &
	pid=$!
	peak_kb=0
	while kill -0 "$pid" 2>/dev/null; do
		hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
		[ "${hwm:-0}" -gt "$peak_kb" ] && peak_kb=$hwm
		sleep 0.2
	done
	wait "$pid" || [ $? -eq 1 ]
fi
wall="$(echo "$(date +%s.%N) - $start" | bc | cut -d. -f1) s"
if [ -n "$reuse" ]; then
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2 " (m:ss)"}' "$out/time.txt" 2>/dev/null)
	wall=${wall:-unknown}
fi

j="$out/backtest.json"
echo "## catalogbot backtest of $repo"
echo
echo "- head: $(jq -r .head "$j"), last $n commits that touched a catalog root, policy $(basename "$policy")"
echo "- machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo
jq -r '.summaries[0] |
	"| commits | unreadable | reviewed | verdicts | would merge |\n|---|---|---|---|---|\n" +
	"| \(.commits) | \(.unreadable) | \(.commits - .unreadable) | \(.verdicts | to_entries | map("\(.key) \(.value)") | join(", ")) | \(.mergeable) |\n\n" +
	"| check | conclusions |\n|---|---|\n" +
	(.checks | to_entries | map("| \(.key) | \(.value | to_entries | map("\(.key) \(.value)") | join(", ")) |") | join("\n"))' "$j"
echo
echo "### Time per reviewed commit"
echo
jq -r '[.commits[] | select(.unreadable == null) | .millis] | sort |
	if length == 0 then "no commit reviewed" else
	"median \(.[(length/2|floor)]) ms, max \(.[-1]) ms, total \(add) ms over \(length) commits" end' "$j"
echo "- wall time of the whole run: $wall; peak RSS: $((${peak_kb:-0} / 1024)) MiB"
echo
echo "### fbc failures, with opm's verdict on the same package directories"
echo
echo "| commit | subject | catalogbot errors by rule | package directories | opm (refvalidate) |"
echo "|---|---|---|---|---|"
jq -r '.commits[] | select(.unreadable == null) |
	. as $c | .reviews[0].checks[] | select(.name == "fbc" and .conclusion == "failure") |
	[$c.sha, $c.subject,
	 (.findings | group_by(.rule) | map("\(.[0].rule) x\(length) (first \(.[0].file):\(.[0].line))") | join("; ")),
	 ([.findings[].file | select(. != null) | split("/") | .[0:3] | join("/")] | unique | join(" "))] | @tsv' "$j" |
while IFS=$'\t' read -r sha subject errors dirs; do
	verdicts=()
	for dir in $dirs; do
		tmp=$(mktemp -d)
		if git -C "$repo" archive "$sha" "$dir" 2>/dev/null | tar -x -C "$tmp" 2>/dev/null; then
			if "$out/refvalidate" "$tmp/$dir" >/dev/null 2>&1; then
				verdicts+=("$dir valid")
			else
				verdicts+=("$dir invalid")
			fi
		else
			verdicts+=("$dir unreadable")
		fi
		rm -rf "$tmp"
	done
	echo "| ${sha:0:9} | $subject | $errors | $dirs | ${verdicts[*]:-} |"
done
echo
echo "### Release-guard findings"
echo
jq -r '[.commits[] | select(.unreadable == null) | . as $c | .reviews[0].checks[] | select(.name == "release") | .findings[]? | {sha: $c.sha, rule, bundle, package}] |
	"\(length) findings on \(map(.sha) | unique | length) commits",
	(group_by(.sha)[] | "- \(.[0].sha[0:9]): \(length) (\(map(.rule) | unique | join(", "))), bundles \(map(.bundle // "-") | unique | join(", "))")' "$j"
echo
echo "The JSON report and the timings are in $out."

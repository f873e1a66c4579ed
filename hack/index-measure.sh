#!/usr/bin/env bash
# hack/index-measure.sh REPO [N]: measures `catalogbot check` on the last N
# (default 31) first-parent commits of REPO that touched catalogs/, each
# checked as the change from its first parent under the
# community-operators-prod policy, against git reading the same objects,
# interleaved in one run, in CPU time (user+system, GNU time), oldest
# commit first. Per commit, in this order:
#
#   git-base     git cat-file --batch reading every blob under catalogs/ of
#                the base
#   cold         check --cache-dir=off: a fresh process, no package index
#   git-touched  git cat-file --batch reading only the blobs of the package
#                directories the commit touches, on both sides
#   git-package  the same for the touched packages (a package is its name
#                across every catalog): their directories in every
#                catalog root, on both sides
#   ancestor     check with the package index the previous commit's check
#                left in one cache directory: an ancestor's index, derived
#                to the base's (the Action after actions/cache restored
#                the last run's directory)
#   base         the same check again: the base's own index on disk
#
# The first commit only fills the cache; the others are reported: the
# median, p90 and max of each figure and of the ratios cold/git-base,
# ancestor and base against git-touched and git-package (ratios taken
# per commit),
# the peak RSS of each kind of check, and the load average before and
# after. REPO is only read (a bare clone is made beside it with
# alternates). The figures are CPU time so that a loaded machine moves
# them less than wall time; the load is printed beside them.
#
# Environment: INDEX_MEASURE_OUT keeps the work directory (default: a
# temporary one, removed at the end).
set -euo pipefail

repo=${1:?usage: hack/index-measure.sh REPO [N]}
n=${2:-31}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${INDEX_MEASURE_OUT:-$(mktemp -d)}
[ -n "${INDEX_MEASURE_OUT:-}" ] || trap 'rm -rf "$out"' EXIT
mkdir -p "$out"
[ -x /usr/bin/time ] || { echo "needs GNU time (/usr/bin/time)" >&2; exit 2; }

(cd "$here" && go build -o "$out/catalogbot" ./cmd/catalogbot)
work="$out/repo.git"
rm -rf "$work" "$out/index"
git clone -q --bare --shared "$repo" "$work"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench \
	GIT_COMMITTER_EMAIL=bench@example.invalid GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
policy=$(git -C "$work" hash-object -w "$here/cmd/catalogbot/testdata/community-operators-prod.catalogbot.yaml")

# with_policy COMMIT PARENT: COMMIT's tree with the policy, on PARENT,
# dated as COMMIT (a merge base is found walking by date). A file under
# catalogs/ whose blob the repository lacks (a partial clone, or a
# snapshot without its largest blobs) is left out of the tree, so that
# every check judges; INDEX_MEASURE_KEEP_MISSING=1 keeps the trees as
# they are.
with_policy() {
	local tree catalogs when
	when=$(git -C "$work" log -1 --format=%cI "$1")
	catalogs=$(git -C "$work" rev-parse "$1:catalogs")
	if [ -z "${INDEX_MEASURE_KEEP_MISSING:-}" ]; then
		git -C "$work" ls-tree -r "$catalogs" >"$out/cat.ls"
		awk '{print $3}' "$out/cat.ls" | git -C "$work" cat-file --batch-check='%(objectname) %(objecttype)' 2>/dev/null |
			awk '$2 == "missing" {print $1}' >"$out/cat.missing"
		rm -f "$out/tmp.index"
		grep -v -F -f "$out/cat.missing" "$out/cat.ls" | GIT_INDEX_FILE="$out/tmp.index" git -C "$work" update-index --add --index-info
		catalogs=$(GIT_INDEX_FILE="$out/tmp.index" git -C "$work" write-tree)
	fi
	tree=$({
		git -C "$work" ls-tree "$1" | grep -v -e $'\t.catalogbot.yaml$' -e $'\tcatalogs$' || true
		printf '040000 tree %s\tcatalogs\n100644 blob %s\t.catalogbot.yaml\n' "$catalogs" "$policy"
	} | git -C "$work" mktree)
	GIT_AUTHOR_DATE=$when GIT_COMMITTER_DATE=$when git -C "$work" commit-tree "$tree" -p "$2" -m "bench: $1"
}

# cpu FILE CMD...: runs CMD, appends "user+sys wall rss_kib" to FILE.
cpu() {
	local file=$1
	shift
	local tf="$out/time.txt"
	/usr/bin/time -f '%U %S %e %M' -o "$tf" "$@" >/dev/null 2>"$out/stderr.txt" || {
		local rc=$?
		# 0 and 1 are verdicts; anything else is none.
		if [ "$rc" -ne 1 ]; then
			echo "failed ($rc): $*" >&2
			cat "$out/stderr.txt" >&2
			exit 1
		fi
	}
	tail -n 1 "$tf" | awk '{printf "%.3f %.3f %d\n", $1 + $2, $3, $4}' >>"$file"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
mapfile -t commits < <(git -C "$work" log --first-parent --format=%H -n "$n" -- catalogs | tac)
rm -f "$out"/*.cpu "$out/rows.txt" "$out/prs.txt"
i=0
for c in "${commits[@]}"; do
	parent=$(git -C "$work" rev-parse "$c^1")
	base=$(with_policy "$parent" "$parent")
	head=$(with_policy "$c" "$base")
	echo "${c:0:9} $base $head" >>"$out/prs.txt"
	git -C "$work" ls-tree -r "$base" catalogs | awk '$2 == "blob" {print $3}' >"$out/all.blobs"
	: >"$out/touched.blobs"
	for dir in $(git -C "$work" diff --name-only "$parent" "$c" -- catalogs | cut -d/ -f1-3 | sort -u); do
		for side in "$base" "$head"; do
			git -C "$work" ls-tree -r "$side" -- "$dir" | awk '$2 == "blob" {print $3}' >>"$out/touched.blobs"
		done
	done
	sort -u -o "$out/touched.blobs" "$out/touched.blobs"
	# A package is its name across every catalog: the touched packages'
	# directories in every catalog root, on both sides.
	: >"$out/package.blobs"
	for pkg in $(git -C "$work" diff --name-only "$parent" "$c" -- catalogs | cut -d/ -f3 | sort -u); do
		for side in "$base" "$head"; do
			git -C "$work" ls-tree -r "$side" -- catalogs | awk -v p="$pkg" '$2 == "blob" {split($4, f, "/"); if (f[3] == p) print $3}' >>"$out/package.blobs"
		done
	done
	sort -u -o "$out/package.blobs" "$out/package.blobs"
	check=("$out/catalogbot" check --repo "$work" --base "$base" --head "$head" --images=false --render=false
		--author catalogbot-bench -o json)
	export GITHUB_ACTIONS=
	if [ "$i" -eq 0 ]; then
		# Fills the cache with this base's index: the next commit's
		# ancestor.
		"${check[@]}" --cache-dir "$out/index" >/dev/null 2>&1 || true
		i=1
		continue
	fi
	cpu "$out/git-base.cpu" git -C "$work" cat-file --batch <"$out/all.blobs"
	cpu "$out/cold.cpu" "${check[@]}" --cache-dir=off
	cpu "$out/git-touched.cpu" git -C "$work" cat-file --batch <"$out/touched.blobs"
	cpu "$out/git-package.cpu" git -C "$work" cat-file --batch <"$out/package.blobs"
	cpu "$out/ancestor.cpu" "${check[@]}" --cache-dir "$out/index"
	cpu "$out/base.cpu" "${check[@]}" --cache-dir "$out/index"
	echo "${c:0:9} $(tail -n1 "$out/git-base.cpu" | cut -d' ' -f1) $(tail -n1 "$out/cold.cpu" | cut -d' ' -f1) $(tail -n1 "$out/git-touched.cpu" | cut -d' ' -f1) $(tail -n1 "$out/ancestor.cpu" | cut -d' ' -f1) $(tail -n1 "$out/base.cpu" | cut -d' ' -f1) $(wc -l <"$out/touched.blobs") $(tail -n1 "$out/git-package.cpu" | cut -d' ' -f1) $(wc -l <"$out/package.blobs")" >>"$out/rows.txt"
	i=$((i + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# stats: median, p90, max of column 1 of stdin.
stats() { sort -g | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; p = v[int(NR * 0.9 + 0.5)]; printf "%.3f | %.3f | %.3f", m, p, v[NR]}'; }
ratio() { paste -d' ' "$out/$1.cpu" "$out/$2.cpu" | awk '{printf "%.3f\n", $1 / ($4 > 0 ? $4 : 0.001)}' | stats; }
peak() { sort -k3 -g "$out/$1.cpu" | tail -n1 | awk '{printf "%.0f MiB", $3 / 1024}'; }

echo "## catalogbot check against git, CPU seconds (user+system), $(($(wc -l <"$out/rows.txt"))) commits of $repo"
echo
echo "- machine: $(nproc) cores, load average before $load_before, after $load_after"
echo
echo "| figure | median | p90 | max |"
echo "|---|---:|---:|---:|"
for f in git-base cold git-touched git-package ancestor base; do
	echo "| $f | $(cut -d' ' -f1 "$out/$f.cpu" | stats) |"
done
echo "| cold / git-base | $(ratio cold git-base) |"
echo "| ancestor / git-touched | $(ratio ancestor git-touched) |"
echo "| base / git-touched | $(ratio base git-touched) |"
echo "| ancestor / git-package | $(ratio ancestor git-package) |"
echo "| base / git-package | $(ratio base git-package) |"
echo
echo "Peak RSS: cold $(peak cold), ancestor $(peak ancestor), base $(peak base). Per commit (CPU s: git-base cold git-touched ancestor base; touched blobs; git-package; package blobs):"
echo
sed 's/^/    /' "$out/rows.txt"

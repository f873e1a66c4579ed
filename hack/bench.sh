#!/usr/bin/env bash
# hack/bench.sh (`make bench`): times bin/catalogbot against the reference
# validator (operator-registry v1.65.0 through checks/fbc/conformance's
# cmd/refvalidate) on real and synthetic catalogs and prints a Markdown
# report.
#
# Inputs, prepared once under .bench/ (gitignored) and reused while their
# sources do not change:
#   - the community-operators snapshot (../shared/corpus/
#     community-operators-prod.tar.zst), each catalogs/v4.x directory a
#     separate input, plus a row summing them;
#   - synthetic catalogs from checks/fbc/fbcgen/cmd/fbcgen of 27.5, 55 and 110 MB
#     (same shape, more packages: the growth should be linear).
# Every input is valid, so a non-zero exit from either tool fails that run.
#
# Each tool runs BENCH_RUNS times per input (default 3), alternating, under
# GNU time (`/usr/bin/time -f '%e %U %S %M'`, installed with apt-get when
# missing); the table shows the median
# wall and user+sys time and the highest peak RSS. The target for the
# 110 MB catalog on a 2-core machine is <= 2 s wall and <= 150 MiB.
#
# Environment:
#   BENCH_RUNS     runs per tool and input (default 3)
#   BENCH_SIZES    synthetic sizes (default "27.5MB 55MB 110MB")
#   BENCH_CORPUS   corpus tarball (default ../shared/corpus/community-operators-prod.tar.zst)
#   BENCH_TIMEOUT  seconds before a run is killed (default 600)
#   BENCH_ONLY     only inputs whose name matches this extended regexp
#   CATALOGBOT_BENCH_REPO  a full clone of redhat-openshift-ecosystem/
#                  community-operators-prod: BenchmarkColdCheck (cmd/catalogbot)
#                  times a cold `catalogbot check` of real commits beside
#                  `git cat-file --batch` reading the base's catalog blobs,
#                  and BenchmarkWarmCheck(Indexed) the same checks in a
#                  process that checked the previous commit, without and
#                  with a package index; unset, all are skipped (and say so)
#   CATALOGBOT_BENCH_COMMITS  the commits it checks (default: seven merged
#                  catalog changes, listed in the benchmark)
#
# Missing pieces (GNU time aside) do not stop the script: it reports what is
# missing, runs what it can, and exits 1 if anything was missing or failed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# The load when the runs began, beside the load at the end in the report:
# on a shared machine every figure moves with it.
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)

runs=${BENCH_RUNS:-3}
sizes=${BENCH_SIZES:-27.5MB 55MB 110MB}
corpus=${BENCH_CORPUS:-$(dirname "$root")/shared/corpus/community-operators-prod.tar.zst}
timeout_s=${BENCH_TIMEOUT:-600}
only=${BENCH_ONLY:-}
bench=$root/.bench
timefmt='%e %U %S %M'
TIME=/usr/bin/time

problems=()
problem() {
	problems+=("$*")
	echo "bench: $*" >&2
}
log() { echo "bench: $*" >&2; }

if ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
	echo "bench: BENCH_RUNS must be a positive integer, got '$runs'" >&2
	exit 2
fi
# gnu_time: true if $TIME is GNU time (bash's time keyword and BusyBox's
# time cannot report peak RSS in this format).
gnu_time() { [ -x "$TIME" ] && "$TIME" -f '%e' -o /dev/null true 2>/dev/null; }
if ! gnu_time; then
	# GNU time measures the peak RSS the report shows. It is Debian's
	# "time" package: install it when apt-get can, else say what to do.
	if command -v apt-get >/dev/null; then
		sudo=""
		[ "$(id -u)" -ne 0 ] && sudo="sudo"
		echo "bench: GNU time is not at $TIME; installing Debian's time package (${sudo:+$sudo }apt-get install time)" >&2
		if ! { DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends time >&2 ||
			{ $sudo apt-get update >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends time >&2; }; }; then
			echo "bench: installing GNU time failed; install it (apt-get install time) and rerun" >&2
			exit 2
		fi
	fi
	if ! gnu_time; then
		echo "bench: GNU time is required at $TIME to measure wall time and peak RSS (Debian/Ubuntu: apt-get install time)" >&2
		exit 2
	fi
fi
run_timeout=()
if command -v timeout >/dev/null; then
	run_timeout=(timeout "$timeout_s")
fi
mkdir -p "$bench" bin

# --- tools -------------------------------------------------------------

catalogbot=""
log "building bin/catalogbot (make build)"
if make build >"$bench/build-catalogbot.log" 2>&1; then
	if [ ! -x bin/catalogbot ]; then
		problem "make build succeeded but bin/catalogbot is missing"
	elif ! bin/catalogbot validate --help >"$bench/catalogbot-validate-help.txt" 2>&1; then
		problem "bin/catalogbot has no working 'validate' command yet ($(head -c 200 "$bench/catalogbot-validate-help.txt" | tr '\n' ' '))"
	elif ! grep -qE -- '--output|-o[ ,]' "$bench/catalogbot-validate-help.txt"; then
		problem "bin/catalogbot validate has no -o/--output flag yet (needed for '-o opm')"
	else
		catalogbot=bin/catalogbot
	fi
else
	problem "make build failed: $(tail -n 3 "$bench/build-catalogbot.log" | tr '\n' ' ') (full log: .bench/build-catalogbot.log)"
fi

refvalidate=""
if [ -d checks/fbc/conformance/cmd/refvalidate ]; then
	log "building bin/refvalidate (checks/fbc/conformance/cmd/refvalidate)"
	# The tags make uses (GOTAGS): no gpgme, no C compiler needed.
	if (cd checks/fbc/conformance && CGO_ENABLED=0 go build -tags json1,containers_image_openpgp -o ../../../bin/refvalidate ./cmd/refvalidate) >"$bench/build-refvalidate.log" 2>&1; then
		refvalidate=bin/refvalidate
	else
		problem "building refvalidate failed: $(tail -n 3 "$bench/build-refvalidate.log" | tr '\n' ' ') (full log: .bench/build-refvalidate.log)"
	fi
else
	problem "checks/fbc/conformance/cmd/refvalidate does not exist yet: no reference timings"
fi

# --- inputs ------------------------------------------------------------

inputs=()  # "name|dir|group"

# stamp FILE CONTENT: true if FILE already holds CONTENT.
stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

if [ -f "$corpus" ]; then
	if ! command -v zstd >/dev/null; then
		problem "zstd is not installed: cannot unpack $corpus (apt-get install zstd)"
	else
		want="$(stat -c '%s %Y' "$corpus") $corpus"
		if ! stamp_ok "$bench/corpus.stamp" "$want" || [ ! -d "$bench/corpus" ]; then
			log "unpacking $corpus into .bench/corpus"
			rm -rf "$bench/corpus" "$bench/corpus.stamp"
			mkdir -p "$bench/corpus.tmp"
			tar --zstd -xf "$corpus" -C "$bench/corpus.tmp"
			mv "$bench/corpus.tmp" "$bench/corpus"
			echo "$want" >"$bench/corpus.stamp"
		fi
		while IFS= read -r dir; do
			inputs+=("corpus $(basename "$dir")|$dir|corpus")
		done < <(find "$bench/corpus" -mindepth 3 -maxdepth 3 -type d -path '*/catalogs/v*' | sort -V)
	fi
else
	problem "corpus tarball $corpus not found: no corpus inputs"
fi

log "building the synthetic catalog generator"
if go build -o "$bench/fbcgen" ./checks/fbc/fbcgen/cmd/fbcgen >"$bench/build-fbcgen.log" 2>&1; then
	gen_hash=$(cat checks/fbc/fbcgen/*.go checks/fbc/fbcgen/cmd/fbcgen/*.go | sha256sum | cut -c1-16)
	for size in $sizes; do
		dir=$bench/synthetic-$size
		want="$gen_hash $size"
		if ! stamp_ok "$dir.stamp" "$want" || [ ! -d "$dir" ]; then
			log "generating a $size synthetic catalog"
			rm -rf "$dir" "$dir.stamp"
			"$bench/fbcgen" -o "$dir" -size "$size" | tee "$dir.txt" >&2
			echo "$want" >"$dir.stamp"
		fi
		inputs+=("synthetic $size|$dir|synthetic")
	done
else
	problem "building checks/fbc/fbcgen/cmd/fbcgen failed (see .bench/build-fbcgen.log): no synthetic inputs"
fi

# --- runs --------------------------------------------------------------

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print ""; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
maxof() { sort -g | tail -n 1; }

# timed TOOL INPUTNAME OUTFILE CMD...: one run; appends "wall cpu rssKB" to
# OUTFILE, or reports the failure.
timed() {
	local tool=$1 name=$2 out=$3 rc=0
	shift 3
	local tf=$bench/time.out log=$bench/run.log
	: >"$tf"
	"${run_timeout[@]}" "$TIME" -f "$timefmt" -o "$tf" "$@" >"$log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		local why="exit status $rc"
		[ "$rc" -eq 124 ] && why="timed out after ${timeout_s}s"
		problem "$tool on $name: $why (the input is valid): $(head -c 400 "$log" | tr '\n' ' ')"
		return 1
	fi
	tail -n 1 "$tf" | awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' >>"$out"
}

fmt() { # fmt PRINTF-FORMAT VALUE: "n/a" for an empty value
	if [ -z "$2" ]; then echo "n/a"; else printf "$1" "$2"; fi
}
ratio() { # ratio A B: A/B to 1 decimal, or n/a
	if [ -z "$1" ] || [ -z "$2" ]; then echo "n/a"; else awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.1fx", a / b; else print "n/a"}'; fi
}

rows=()
sum_size=0 sum_bundles=0 sum_cb_wall=0 sum_cb_cpu=0 max_cb_rss=0 sum_ref_wall=0 max_ref_rss=0
corpus_rows=0 corpus_cb_ok=1 corpus_ref_ok=1
target_line=""

for input in "${inputs[@]}"; do
	IFS='|' read -r name dir group <<<"$input"
	if [ -n "$only" ] && ! [[ $name =~ $only ]]; then
		continue
	fi
	bytes=$(find "$dir" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
	# Reading every file also warms the page cache for the first timed run.
	bundles=$(find "$dir" -type f -print0 | xargs -0 cat | grep -c -E '^schema: olm\.bundle$|^ *"schema": "olm\.bundle",?$' || true)
	size_mb=$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1e6}')
	log "$name: $size_mb MB, $bundles bundles, $runs run(s) per tool"

	cbf=$bench/cb.times reff=$bench/ref.times
	: >"$cbf"
	: >"$reff"
	for ((i = 1; i <= runs; i++)); do
		if [ -n "$catalogbot" ]; then
			timed catalogbot "$name" "$cbf" "$catalogbot" validate "$dir" -o opm || true
		fi
		if [ -n "$refvalidate" ]; then
			timed reference "$name" "$reff" "$refvalidate" "$dir" || true
		fi
	done
	cb_n=$(wc -l <"$cbf") ref_n=$(wc -l <"$reff")
	cb_wall="" cb_cpu="" cb_rss="" cb_util="" ref_wall="" ref_rss=""
	if [ "$cb_n" -eq "$runs" ]; then
		cb_wall=$(awk '{print $1}' "$cbf" | median)
		cb_cpu=$(awk '{print $2}' "$cbf" | median)
		cb_rss=$(awk '{printf "%.1f\n", $3 / 1024}' "$cbf" | maxof)
		cb_util=$(awk -v c="$cb_cpu" -v w="$cb_wall" 'BEGIN {if (w > 0) printf "%.2f", c / w}')
	fi
	if [ "$ref_n" -eq "$runs" ]; then
		ref_wall=$(awk '{print $1}' "$reff" | median)
		ref_rss=$(awk '{printf "%.1f\n", $3 / 1024}' "$reff" | maxof)
	fi
	cb_mbs=""
	if [ -n "$cb_wall" ]; then
		cb_mbs=$(awk -v b="$bytes" -v w="$cb_wall" 'BEGIN {if (w > 0) printf "%.0f", b / 1e6 / w}')
	fi
	rows+=("| $name | $size_mb | $bundles | $(fmt %s "$cb_wall") | $(fmt %s "$cb_cpu") | $(fmt %s "$cb_rss") | $(fmt %s "$cb_util") | $(fmt %s "$cb_mbs") | $(fmt %s "$ref_wall") | $(fmt %s "$ref_rss") | $(ratio "$ref_wall" "$cb_wall") | $(ratio "$ref_rss" "$cb_rss") |")

	if [ "$group" = corpus ]; then
		corpus_rows=$((corpus_rows + 1))
		sum_size=$((sum_size + bytes))
		sum_bundles=$((sum_bundles + bundles))
		if [ -n "$cb_wall" ]; then
			sum_cb_wall=$(awk -v a="$sum_cb_wall" -v b="$cb_wall" 'BEGIN {print a + b}')
			sum_cb_cpu=$(awk -v a="$sum_cb_cpu" -v b="$cb_cpu" 'BEGIN {print a + b}')
			max_cb_rss=$(printf '%s\n%s\n' "$max_cb_rss" "$cb_rss" | maxof)
		else
			corpus_cb_ok=0
		fi
		if [ -n "$ref_wall" ]; then
			sum_ref_wall=$(awk -v a="$sum_ref_wall" -v b="$ref_wall" 'BEGIN {print a + b}')
			max_ref_rss=$(printf '%s\n%s\n' "$max_ref_rss" "$ref_rss" | maxof)
		else
			corpus_ref_ok=0
		fi
	fi
	if [ "$name" = "synthetic 110MB" ] && [ -n "$cb_wall" ]; then
		verdict=$(awk -v w="$cb_wall" -v r="$cb_rss" 'BEGIN {print ((w <= 2 && r <= 150) ? "met" : "NOT met")}')
		target_line="Target for the 110 MB catalog (<= 2 s wall, <= 150 MiB peak RSS): **$verdict** (${cb_wall} s, ${cb_rss} MiB; reference ${ref_wall:-n/a} s, ${ref_rss:-n/a} MiB)."
	fi
done

if [ "$corpus_rows" -gt 0 ]; then
	s_cb_wall="" s_cb_cpu="" s_cb_rss="" s_util="" s_mbs="" s_ref_wall="" s_ref_rss=""
	if [ "$corpus_cb_ok" -eq 1 ] && [ -n "$catalogbot" ]; then
		s_cb_wall=$(printf '%.2f' "$sum_cb_wall")
		s_cb_cpu=$(printf '%.2f' "$sum_cb_cpu")
		s_cb_rss=$max_cb_rss
		s_util=$(awk -v c="$sum_cb_cpu" -v w="$sum_cb_wall" 'BEGIN {if (w > 0) printf "%.2f", c / w}')
		s_mbs=$(awk -v b="$sum_size" -v w="$sum_cb_wall" 'BEGIN {if (w > 0) printf "%.0f", b / 1e6 / w}')
	fi
	if [ "$corpus_ref_ok" -eq 1 ] && [ -n "$refvalidate" ]; then
		s_ref_wall=$(printf '%.2f' "$sum_ref_wall")
		s_ref_rss=$max_ref_rss
	fi
	rows+=("| **corpus, all $corpus_rows versions (sum; RSS = max)** | $(awk -v b="$sum_size" 'BEGIN {printf "%.1f", b / 1e6}') | $sum_bundles | $(fmt %s "$s_cb_wall") | $(fmt %s "$s_cb_cpu") | $(fmt %s "$s_cb_rss") | $(fmt %s "$s_util") | $(fmt %s "$s_mbs") | $(fmt %s "$s_ref_wall") | $(fmt %s "$s_ref_rss") | $(ratio "$s_ref_wall" "$s_cb_wall") | $(ratio "$s_ref_rss" "$s_cb_rss") |")
fi

# --- report ------------------------------------------------------------

# The Go benchmarks of the other targets: the PR check on a 2,000-package
# repository (<= 1 s per change), its memory with large files, and the webhook intake (>= 2,000 signed
# deliveries/s with p99 accept <= 20 ms; memory bounded under a flood).
gobench=""
gobench_run() {
	local out
	log "go test -bench $*"
	if ! out=$(go test -run '^$' -benchmem "$@" 2>&1); then
		problem "go benchmarks failed: $*"
	fi
	gobench+="$out"$'\n'
}
gobench_run -bench 'BenchmarkCheckOnePackage$|BenchmarkReleaseOnePackage|BenchmarkCheckOnePackageRelease' -benchtime 5x ./policy/review/pipeline
# A pull request with 1, 16 and 160 images on a tarpit registry: one
# per-reference deadline (2 s) whatever the count.
gobench_run -bench 'BenchmarkTarpit' -benchtime 1x ./policy/review/pipeline
# The same pull requests reconciled by the App against the fake GitHub.
gobench_run -bench 'BenchmarkReconcileTarpit' -benchtime 1x ./webhook/reconcile
# 100 pull requests merged one at a time by three replicas on one PostgreSQL.
gobench_run -bench 'BenchmarkMergeStream' -benchtime 1x ./webhook/reconcile
# Peak memory of a PR check adding one 40 MB and one 200 MB file (<= 4x the
# largest file read, <= 512 MiB under the default limits).
gobench_run -bench 'BenchmarkCheckBigFiles' -benchtime 1x ./policy/review
# A cold check of real community-operators-prod commits, each a fresh
# process with nothing cached, beside git cat-file --batch reading every
# catalog blob of the base (the target: no slower than git).
if [ -z "${CATALOGBOT_BENCH_REPO:-}" ]; then
	log "CATALOGBOT_BENCH_REPO is unset: BenchmarkColdCheck and the BenchmarkWarmCheck benchmarks (checks of real commits) are skipped"
fi
gobench_run -bench 'BenchmarkColdCheck' -benchtime 3x ./cmd/catalogbot
# The same commits checked by a process that checked the previous one (the
# App's next pull request; target <= 100 ms for a one-package change):
# without a package index, then, in a process of its own (the caches of one
# process hold what it checked), with the index the App keeps on disk.
gobench_run -bench 'BenchmarkWarmCheck$' -benchtime 1x ./cmd/catalogbot
gobench_run -bench 'BenchmarkWarmCheckIndexed$' -benchtime 1x ./cmd/catalogbot
gobench_run -bench 'BenchmarkWebhook(Accept|Handler)' -benchtime 3s ./webhook
gobench_run -bench 'BenchmarkWebhookFlood' -benchtime 1x ./webhook
# Genuine deliveries beside 0, 10 and 50 hostile slow connections.
gobench_run -bench 'BenchmarkWebhookHostile' -benchtime 200x ./webhook
# Intake on the in-memory queue and the durable one (SQLite, PostgreSQL;
# the PostgreSQL case skips without initdb and pg_ctl). Each line carries
# its own CPU time per delivery (cpu_us/delivery, and the PostgreSQL
# server's as pg_cpu_us/delivery), wall time per delivery, the load average
# at its start and end, and, for the durable engines, the rate as a share
# of the in-memory queue's in the same run (x_memory): the rates alone
# move with the machine's load.
gobench_run -bench 'BenchmarkIntake' -benchtime 3s ./webhook/durable
# The publish of the 100 MB catalog with opm's serve cache needs opm, which
# the image-run module builds (with cgo when a C compiler is there).
log "go test -bench BenchmarkPublishCache (publisher/build/imagerun)"
if ! out=$(cd publisher/build/imagerun && go test -tags json1,containers_image_openpgp -run '^$' -benchmem -bench 'BenchmarkPublishCache' -benchtime 1x . 2>&1); then
	problem "go benchmarks failed: BenchmarkPublishCache in publisher/build/imagerun"
fi
gobench+="$out"$'\n'

report=$bench/report-$(date +%Y%m%d-%H%M%S).md
{
	echo "## catalogbot benchmark"
	echo
	echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) RAM; load average at the start: $load_start, at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- $(go version)"
	ref_desc=missing
	[ -n "$refvalidate" ] && ref_desc="bin/refvalidate (operator-registry v1.65.0)"
	echo "- catalogbot: ${catalogbot:-missing} ($(git describe --always --dirty 2>/dev/null || echo 'no git')); reference: $ref_desc"
	echo "- $runs run(s) per tool and input, alternating; times are medians, RSS the highest of the runs (GNU time %M); CPU util = (user+sys)/wall"
	echo
	echo "| input | size MB | bundles | catalogbot wall s | user+sys s | peak RSS MiB | CPU util | MB/s | reference wall s | reference RSS MiB | speed-up | memory ratio |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for row in "${rows[@]}"; do
		echo "$row"
	done
	echo
	if [ -n "$target_line" ]; then
		echo "$target_line"
		echo
	fi
	echo "### Go benchmarks"
	echo
	echo '```'
	grep -E '^(Benchmark|goos|cpu|ok|FAIL|---)' <<<"$gobench" || true
	echo '```'
	echo
	if [ "${#problems[@]}" -gt 0 ]; then
		echo "### Problems"
		echo
		for p in "${problems[@]}"; do
			echo "- $p"
		done
		echo
	fi
} | tee "$report"
log "report saved to ${report#"$root"/}"

if [ "${#problems[@]}" -gt 0 ]; then
	exit 1
fi

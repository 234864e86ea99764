#!/usr/bin/env bash
# Instructions per view, one rung of the view_path bench at a time, counted
# by callgrind (valgrind). Unlike time, the count does not move with the
# machine's load, so it shows a cut of a few percent in one run.
#
#   tests/bench/view-instructions.sh [RUNG] [SECONDS]
#   CACHE_SIM=1 tests/bench/view-instructions.sh [RUNG] [SECONDS]
#
# RUNG is one of the view_path bench's: bare, middleware, signed_in,
# own_row, cached (the default), post_not_cached. Counting starts after the
# bench has seeded its data and warmed its caches, and lasts SECONDS (60 by
# default) of the much slower instrumented run. Needs valgrind (Debian:
# `apt-get install valgrind`). Prints the instructions per view, and leaves
# the profile in target/view-instructions/RUNG.cg for callgrind_annotate.
# With CACHE_SIM=1, callgrind also simulates the CPU's caches (slower) and
# the misses per view are printed too: I1mr instruction reads missing the
# first-level cache, D1mr/D1mw data reads/writes missing it, ILmr/DLmr/DLmw
# the same for the last level.
set -euo pipefail

rung=${1:-cached}
seconds=${2:-60}
case $rung in
bare | middleware | signed_in | own_row | cached | post_not_cached) ;;
*)
    echo "unknown rung '$rung' (bare, middleware, signed_in, own_row, cached, post_not_cached)" >&2
    exit 2
    ;;
esac
for tool in valgrind callgrind_control callgrind_annotate; do
    command -v "$tool" >/dev/null || {
        echo "$tool is missing: install valgrind (Debian: apt-get install valgrind)" >&2
        exit 2
    }
done

cd "$(dirname "$0")/../.."
bench=$(cargo bench -p likekit-bench --bench view_path --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*view_path[^"]*\)".*/\1/p' | tail -1)
[ -x "$bench" ] || {
    echo "could not build the view_path bench" >&2
    exit 1
}

out=target/view-instructions
mkdir -p "$out"
rm -f "$out/$rung".cg* "$out/$rung.log"
# The bench runs for as long as it is let; it is stopped below.
sim=()
[ "${CACHE_SIM:-0}" = 1 ] && sim=(--cache-sim=yes)
valgrind --tool=callgrind "${sim[@]}" --instr-atstart=no --callgrind-out-file="$out/$rung.cg" \
    "$bench" --bench --profile-time 100000 "view_path/$rung\$" >"$out/$rung.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
echo "seeding and warming (about a minute under valgrind)…" >&2
until grep -q "Profiling for" "$out/$rung.log"; do
    kill -0 $pid 2>/dev/null || {
        cat "$out/$rung.log" >&2
        exit 1
    }
    sleep 0.2
done
# Past criterion's one-second warm-up: every request of the bench's mix
# has been seen, so only the measured path is counted.
sleep 2
callgrind_control -i on $pid >/dev/null 2>&1
echo "counting for ${seconds}s…" >&2
sleep "$seconds"
callgrind_control -d $pid >/dev/null 2>&1
kill $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
trap - EXIT

profile=$(ls -t "$out/$rung".cg.* | head -1)
mv "$profile" "$out/$rung.cg"
read -r -a events <<<"$(sed -n 's/^events: //p' "$out/$rung.cg")"
read -r -a totals <<<"$(sed -n 's/^totals: //p' "$out/$rung.cg")"
total=${totals[0]}
views=$(callgrind_annotate --inclusive=yes --tree=calling "$out/$rung.cg" 2>/dev/null |
    sed -n 's/.*> .*view_path::Load::next (\([0-9,]*\)x).*/\1/p' | tr -d , | head -1)
[ -n "$views" ] && [ "$views" -gt 0 ] || {
    echo "no view was counted" >&2
    exit 1
}
echo "view_path/$rung: $((total / views)) instructions per view ($views views, $total instructions; $out/$rung.cg)"
# Every rung but post_not_cached answers from warmed caches. A window that
# catches friend sets, tokens or posts read anew (each a thousand times a
# hit: seen once, 30,377 instructions per view against 25,019 for the same
# build) counts those too, not the rung's path: say so, to run it again.
if [ "$rung" != post_not_cached ]; then
    misses=$(callgrind_annotate --inclusive=yes --tree=calling "$out/$rung.cg" 2>/dev/null |
        sed -n 's/.*=> .*[:]\([A-Za-z_:]*\(FriendSet::new\|verify_with_expiry\|sqlite::read_post\)\) (\([0-9,]*\)x).*/\3 \1/p' |
        sort -u)
    if [ -n "$misses" ]; then
        echo "warning: the window caught cache misses, which this count includes; run it again:" >&2
        echo "$misses" | sed 's/^/  /' >&2
    fi
fi
if [ ${#events[@]} -gt 1 ]; then
    line="per view:"
    for i in "${!events[@]}"; do
        line+=" ${events[$i]} $(awk -v t="${totals[$i]}" -v n="$views" 'BEGIN { printf "%.1f", t / n }')"
    done
    echo "$line"
fi

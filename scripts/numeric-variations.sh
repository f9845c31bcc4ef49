#!/usr/bin/env bash
# The float-bearing tests under other BLAS kernels, thread counts and random points (issue 20).
#
# A float64 digit below the noise level depends on the BLAS kernel, the CPU kind and the threads, so CI on a new
# machine (another x86, or aarch64) must not see a test fail for it.  This runs the tests that hold float
# comparisons, the float64 engines' doctests and the README's examples once per variation:
#
#   baseline     the kernel OpenBLAS picks for this CPU, 2 threads
#   threads=1    OPENBLAS_NUM_THREADS=1
#   SkylakeX     OPENBLAS_CORETYPE=SkylakeX     (AVX-512)           x86_64 with AVX-512 only (an Intel Xeon's kernel,
#                                                                    also on an AMD EPYC that has AVX-512)
#   Haswell      OPENBLAS_CORETYPE=Haswell      (AVX2 + FMA)        x86_64 only
#   Sandybridge  OPENBLAS_CORETYPE=Sandybridge  (AVX, no FMA)       x86_64 only
#   Prescott     OPENBLAS_CORETYPE=Prescott     (SSE3: the generic x86 kernel, which OpenBLAS may name Katmai)
#   ARMV8        OPENBLAS_CORETYPE=ARMV8        (the generic kernel) aarch64 only
#   seed         AG_ATTENTION_TEST_SEED=1729: every random point of the tests moves (tests/helpers.py)
#
# Each variation is checked to take effect: OpenBLAS must report the core type and the thread count asked for
# (threadpoolctl's internal_api, num_threads, architecture; the same calls through ctypes where threadpoolctl is
# not installed), or the variation fails.  On top of the tests, the printed results of a few float64 and certified
# computations (repr, str, to_dict without timings and raw floats) must be the same under every BLAS variation.
#
# Prints one line per variation (pass count, seconds) and exits non-zero if any variation fails.
#
#   bash scripts/numeric-variations.sh            # all variations
#   bash scripts/numeric-variations.sh --quick    # SkylakeX (without AVX-512: Sandybridge) and seed, the tests of
#                                                 # QUICK_TESTS only; the baseline's fingerprint only
#
# --quick is what make test runs beside its own pytest run of every test under this machine's own kernel: the
# baseline variation then only prints the fingerprint the SkylakeX variation is compared with (its tests would repeat
# that run), and Sandybridge, threads=1, Haswell, Prescott and ARMV8 are left to make test-all (make variations).
# Its two variations run QUICK_TESTS (below), not TESTS: the tests whose float64 results a BLAS kernel or a seed
# can move (the rank from a spectrum and its gap, the certified ranks' pivoted selection, the Jacobians beside their
# exact values, Krawczyk's boxes, the formulas met by float64 and by balls, the landscape's float paths at the
# smallest size, the stall of one kernel (issue 36), the --json gap, a softmax sweep row, the certification report's
# check, the float64 doctests) and the fingerprint comparison: about 30 s a variation.  What TESTS adds is
# time-driven or structural (deadlines and interrupts, saved states, Dask clusters, closed-form monodromy, Figure
# 3's report, all of tests/exact): its float64 paths are those of QUICK_TESTS, and make test-all runs all of TESTS
# under every variation.
#
# Environment: PY (default .venv/bin/python), AG_ATTENTION_VARIATION_SEED (default 1729), KEEP_LOGS=1 to keep the
# pytest logs (their directory is printed either way when a variation fails).
set -uo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
SEED=${AG_ATTENTION_VARIATION_SEED:-1729}
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1

if ! "$PY" -c "import numpy, ag_attention" 2>/dev/null; then
    echo "numeric-variations: $PY cannot import numpy and ag_attention (run scripts/setup.sh first)" >&2
    exit 2
fi

# What is run: every test file holding a float comparison (or a float64 rank verdict), the float64 engines'
# doctests and the README's examples.  Three tests of other modules assert on float64 results (the --json gap, a
# softmax sweep row, the certification report's float64 check) and are named one by one.  tests/exact is exact
# (GF(p) and python-flint: ag_attention/_exact makes no BLAS call, numpy's integer products do not use BLAS): the
# baseline and the seed variation run all of it but its slowest grid (test_cor38_on_a_grid, GF(p) ranks only), the
# BLAS variations only its float comparison (test_balls.py), so that a variation takes about 20 s.
TESTS=(
    tests/numeric
    tests/exact/test_balls.py
    tests/models
    tests/test_network.py
    tests/test_results.py
    tests/reproduce/test_figure3.py
    tests/reproduce/test_certification.py
    tests/cli/test_algebra.py::test_cli_normalized_and_fibers
    tests/cli/test_algebra.py::test_cli_dim_normalized_json_is_certified
    tests/sweep/test_compute.py::test_a_softmax_row_is_float64_then_balls
    "tests/landscape/test_critical.py::test_gaussian_float_data_at_every_scale[1-5-14]"
    tests/numeric/test_monodromy.py::test_the_stall_of_one_blas_kernel_is_not_a_stop
    ag_attention/_numeric
    README.md
)
# --quick: the float64 rank, spectrum, gap and certification tests, the Jacobians and formulas, the landscape's and
# monodromy's float paths at small sizes (see the header: what it leaves to the full run, and why)
QUICK_TESTS=(
    tests/numeric/test_gap.py
    tests/numeric/test_spectrum.py
    tests/numeric/test_float64.py
    tests/numeric/test_dimension.py
    tests/numeric/test_certified.py
    tests/numeric/test_certify.py
    tests/numeric/test_strata.py
    tests/numeric/test_tracker.py
    tests/numeric/test_homotopy.py
    tests/numeric/test_polylines.py
    tests/numeric/test_result.py
    tests/exact/test_balls.py
    tests/models
    tests/test_network.py
    tests/test_results.py
    tests/reproduce/test_certification.py::test_quick_report_certifies_every_network_and_rechecks_them
    tests/cli/test_algebra.py::test_cli_normalized_and_fibers
    tests/cli/test_algebra.py::test_cli_dim_normalized_json_is_certified
    tests/sweep/test_compute.py::test_a_softmax_row_is_float64_then_balls
    "tests/landscape/test_critical.py::test_gaussian_float_data_at_every_scale[1-5-14]"
    tests/numeric/test_monodromy.py::test_the_stall_of_one_blas_kernel_is_not_a_stop
    ag_attention/_numeric
    README.md
)
EXACT=(tests/exact)
DESELECT="not test_cor38_on_a_grid"

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/numeric-variations.XXXXXX")
cleanup() { [ "${KEEP_LOGS:-0}" = 1 ] || [ "${failed:-0}" -gt 0 ] || rm -rf "$LOGS"; }
trap cleanup EXIT

# OpenBLAS as numpy loads it under the environment assignments "$@":
# "how internal_api num_threads architecture version" (threadpoolctl if installed)
blas_info() {
    env "$@" "$PY" - <<'EOF'
import ctypes, glob, os
import numpy
try:
    from threadpoolctl import threadpool_info
    info = [i for i in threadpool_info() if i.get("internal_api") == "openblas"]
    if info:
        i = info[0]
        print("threadpoolctl", i["internal_api"], i["num_threads"], i.get("architecture"), i.get("version"))
        raise SystemExit(0)
except ImportError:
    pass
# the calls threadpoolctl makes, on the OpenBLAS that numpy bundles (numpy.libs) or links
base = os.path.dirname(numpy.__file__)
libs = glob.glob(os.path.join(base, os.pardir, "numpy.libs", "*openblas*")) + glob.glob(os.path.join(base, ".libs", "*openblas*"))
if not libs:
    print("none none none none")
    raise SystemExit(0)
lib = ctypes.CDLL(libs[0])
def symbol(name):
    for prefix in ("scipy_", ""):
        for suffix in ("64_", "_64", ""):
            f = getattr(lib, prefix + name + suffix, None)
            if f is not None:
                return f
    raise SystemExit(f"no {name} in {libs[0]}")
core, threads, config = symbol("openblas_get_corename"), symbol("openblas_get_num_threads"), symbol("openblas_get_config")
core.restype = config.restype = ctypes.c_char_p
version = config().decode().split()[1]
print("ctypes", "openblas", threads(), core().decode(), version)
EOF
}

# What a person sees of a few float64 results (softmax certified, lightning numerical, causal, deep, a no-verdict),
# without timings and without the raw floats that to_dict keeps on purpose: the same under every BLAS variation.
fingerprint() {
    env "$@" "$PY" - <<'EOF'
import json, re
from ag_attention import Architecture
from ag_attention._numeric import numerical_dimension

RAW = {"seconds", "certificate_seconds", "singular_value_gap_raw", "gap_runner_up_raw", "smallest_kept",
       "largest_dropped"}
cases = [
    (Architecture((4, 3), (2,), tokens=3, normalized=True), {}),
    (Architecture((4, 3), (2,), tokens=3, normalized=True, causal=True), {}),
    (Architecture((6, 6, 6), (3, 3), tokens=3, normalized=True), {}),
    (Architecture((5, 4, 1), (2, 1), tokens=3, normalized=True), {}),
    (Architecture((3, 3), (2,), tokens=2), {}),
    (Architecture((3, 2), (2,), tokens=2, normalized=True), {"min_gap": 30, "raise_on_no_gap": False, "certify": False}),
]
for arch, kw in cases:
    r = numerical_dimension(arch, **kw)
    print(repr(r))
    print(re.sub(r", [0-9.]+ s$", "", str(r), flags=re.M))
    print(json.dumps({k: v for k, v in r.to_dict().items() if k not in RAW}, sort_keys=True))
EOF
}

expect_core() {  # the names OpenBLAS may report for a core type asked for
    case "$1" in
        Prescott) echo "Prescott Katmai" ;;
        *) echo "$1" ;;
    esac
}

has_flags() {  # x86 CPU flags needed by a core type
    local flag
    for flag in "$@"; do grep -qw "$flag" /proc/cpuinfo 2>/dev/null || return 1; done
}

machine=$(uname -m)
# name|environment|core type expected ("" = any)|threads expected|compare the fingerprint (a BLAS variation)|run the
# tests (no: the fingerprint only)
if [ $QUICK = 1 ]; then VARIATIONS=("baseline|OPENBLAS_NUM_THREADS=2||2|yes|no")
else VARIATIONS=("baseline|OPENBLAS_NUM_THREADS=2||2|yes"); fi
[ $QUICK = 1 ] || VARIATIONS+=("threads=1|OPENBLAS_NUM_THREADS=1||1|yes")
case "$machine" in
    x86_64)
        if [ $QUICK = 0 ]; then
            if has_flags avx2 fma; then VARIATIONS+=("Haswell|OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=2|Haswell|2|yes")
            else echo "skip Haswell: this CPU has no AVX2/FMA"; fi
        fi
        # SkylakeX in the quick set too: the kernel under which the landscape's monodromy once stalled (issue 36)
        if has_flags avx512f avx512dq avx512bw avx512vl; then VARIATIONS+=("SkylakeX|OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=2|SkylakeX|2|yes")
        else echo "skip SkylakeX: this CPU has no AVX-512"; fi
        # --quick: Sandybridge only where SkylakeX cannot run (one other kernel than the baseline's either way)
        if [ $QUICK = 0 ] || ! has_flags avx512f avx512dq avx512bw avx512vl; then
            if has_flags avx; then VARIATIONS+=("Sandybridge|OPENBLAS_CORETYPE=Sandybridge OPENBLAS_NUM_THREADS=2|Sandybridge|2|yes")
            else echo "skip Sandybridge: this CPU has no AVX"; fi
        fi
        [ $QUICK = 1 ] || VARIATIONS+=("Prescott|OPENBLAS_CORETYPE=Prescott OPENBLAS_NUM_THREADS=2|Prescott|2|yes")
        ;;
    aarch64|arm64)
        [ $QUICK = 1 ] || VARIATIONS+=("ARMV8|OPENBLAS_CORETYPE=ARMV8 OPENBLAS_NUM_THREADS=2|ARMV8|2|yes")
        ;;
    *) echo "no core-type variations on $machine: threads and seeds only" ;;
esac
VARIATIONS+=("seed=$SEED|OPENBLAS_NUM_THREADS=2 AG_ATTENTION_TEST_SEED=$SEED||2|no")

failed=0
reference=""
total_start=$(date +%s)
for v in "${VARIATIONS[@]}"; do
    IFS='|' read -r name assignments core threads compare run_tests <<<"$v"
    read -ra envs <<<"$assignments"
    log="$LOGS/${name//[^A-Za-z0-9=]/_}.log"
    start=$(date +%s.%N)
    problem=""

    read -r via api got_threads got_core version <<<"$(blas_info "${envs[@]}")"
    blas="internal_api=$api num_threads=$got_threads architecture=$got_core version=$version ($via)"
    if [ "$api" != openblas ]; then
        problem="numpy does not use OpenBLAS here ($blas): the variation cannot take effect"
    elif [ "$got_threads" != "$threads" ]; then
        problem="OpenBLAS runs $got_threads threads, not $threads"
    elif [ -n "$core" ] && ! grep -qw -- "$got_core" <<<"$(expect_core "$core")"; then
        problem="OpenBLAS runs the $got_core kernel, not $core"
    fi

    if [ -z "$problem" ] && [ "${run_tests:-yes}" = no ]; then
        counts="fingerprint only"
    elif [ -z "$problem" ]; then
        if [ $QUICK = 1 ]; then
            selection=("${QUICK_TESTS[@]}")
        else
            selection=("${TESTS[@]}")
            # all of tests/exact where its random points or the first run are at stake (see TESTS)
            [ "$compare" = no ] || [ -z "$reference" ] && selection+=("${EXACT[@]}")
        fi
        env "${envs[@]}" "$PY" -m pytest -q -p no:cacheprovider -k "$DESELECT" "${selection[@]}" >"$log" 2>&1
        status=$?
        counts=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$log" | tail -1 | sed -E 's/^=+ //; s/ in [0-9.]+s.*//; s/ =+$//')
        [ $status -eq 0 ] || problem="pytest exited $status: ${counts:-see $log}"
    fi
    if [ -z "$problem" ] && [ "$compare" = yes ]; then
        printed=$(fingerprint "${envs[@]}" 2>&1)
        if [ -z "$reference" ]; then
            reference=$printed
            printf '%s\n' "$printed" >"$LOGS/fingerprint-baseline.txt"
        elif [ "$printed" != "$reference" ]; then
            printf '%s\n' "$printed" >"$LOGS/fingerprint-${name}.txt"
            problem="printed results differ from the baseline's: diff $LOGS/fingerprint-baseline.txt $LOGS/fingerprint-${name}.txt"
        fi
    fi
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')
    if [ -z "$problem" ]; then
        line=$(printf '%-13s PASS  %-28s %4s s   %s' "$name" "${counts:-}" "$seconds" "$blas")
    else
        failed=$((failed + 1))
        line=$(printf '%-13s FAIL  %-28s %4s s   %s\n              %s' "$name" "${counts:-}" "$seconds" "$blas" "$problem")
        [ -f "$log" ] && tail -n 30 "$log" | sed 's/^/    | /' >&2
    fi
    echo "$line"
    counts=""
done

total=$(( $(date +%s) - total_start ))
echo
echo "numeric variations: ${#VARIATIONS[@]} run, $failed failed, ${total} s (logs: $([ $failed -gt 0 ] || [ "${KEEP_LOGS:-0}" = 1 ] && echo "$LOGS" || echo removed))"
[ $failed -eq 0 ]

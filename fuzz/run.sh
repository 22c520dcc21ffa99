#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60), then lists any crash found.
# Usage: fuzz/run.sh [seconds] [target…]
#
# cargo-fuzz needs nightly-only sanitizer flags. With only a stable toolchain,
# RUSTC_BOOTSTRAP=1 lets stable rustc accept them; with a nightly toolchain installed,
# FUZZ_TOOLCHAIN=nightly uses it instead. Crashes land in fuzz/artifacts/<target>/:
# copy each into tests/fuzz_regressions/<target>/ so the normal test suite replays it.
#
# Targets are built optimised *with* debug assertions and overflow checks (cargo-fuzz's
# default; `-O` would turn them off), like the test suite that replays saved inputs.
# FUZZ_BUILD=dev builds them unoptimised instead: several times faster to compile on a
# small machine, fewer executions per second.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
shift || true
if ! command -v cargo-fuzz >/dev/null; then
    echo "cargo-fuzz is missing: cargo install cargo-fuzz" >&2
    exit 1
fi
build=()
[[ "${FUZZ_BUILD:-}" == dev ]] && build=(--dev)
toolchain=()
if [[ -n "${FUZZ_TOOLCHAIN:-}" ]]; then
    toolchain=("+${FUZZ_TOOLCHAIN}")
else
    export RUSTC_BOOTSTRAP=1
fi
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(cargo "${toolchain[@]}" fuzz list)
fi
status=0
for target in "${targets[@]}"; do
    seeds="../tests/fuzz_regressions/${target}"
    mkdir -p "corpus/${target}"
    [[ -d "seeds/${target}" ]] && cp -n "seeds/${target}"/* "corpus/${target}/" 2>/dev/null || true
    [[ -d "${seeds}" ]] && cp -n "${seeds}"/* "corpus/${target}/" 2>/dev/null || true
    echo "== ${target}: ${seconds}s"
    if ! cargo "${toolchain[@]}" fuzz run "${build[@]}" "${target}" "corpus/${target}" -- \
        -max_total_time="${seconds}" -max_len=65536 -rss_limit_mb=2048 -timeout=10; then
        status=1
    fi
done
if compgen -G "artifacts/*/*" >/dev/null; then
    echo "crashes found:" >&2
    ls artifacts/*/* >&2
    echo "copy each into tests/fuzz_regressions/<target>/ and fix the library" >&2
fi
exit "${status}"

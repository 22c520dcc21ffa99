#!/usr/bin/env bash
# Builds evalock and runs its main job on the bundled demo project, in a scratch git
# repository so this checkout is never modified: check the frozen assets, run the suites
# through the stub completer, accept the first baselines, then show a refused in-place
# edit and a regression with its completion diff.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cargo build --release --locked --manifest-path "$here/Cargo.toml"
# Where cargo put it: CARGO_TARGET_DIR or build.target-dir may move target/ elsewhere.
target_dir="$(cargo metadata --format-version 1 --no-deps --manifest-path "$here/Cargo.toml" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
evalock="$target_dir/release/evalock"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp -R "$here/fixtures/demo/." "$scratch/"
cd "$scratch"
git init -q -b main
git -c user.email=demo@example.com -c user.name=demo add -A
git -c user.email=demo@example.com -c user.name=demo commit -q -m "demo project"

step() { printf '\n== %s\n' "$*"; }
expect() { # expect CODE command...: run, show the exit code, fail the demo if it differs
  local want=$1; shift
  set +e; "$@"; local got=$?; set -e
  echo "(exit code $got)"
  [ "$got" -eq "$want" ] || { echo "demo: expected exit code $want" >&2; exit 1; }
}

step "evalock check: cases, prompts and graders match evalock.lock"
expect 0 "$evalock" check
step "evalock run: every case through the completer, graded"
expect 0 "$evalock" run
step "evalock accept: record the last-good completions"
expect 0 "$evalock" accept --reason "first recording"
step "a shipped case edited in place is refused"
sed -i 's/I want my money back\./I want my money back now./' evals/support.jsonl
expect 2 "$evalock" check
git checkout -q -- evals/support.jsonl
step "a regressed completer: which case regressed, and how its completion moved"
sed -i 's|"completers/stub.py"]|"completers/stub.py", "regressed"]|' evalock.toml
expect 1 "$evalock" run --suite support
step "next: the tour"
echo "The binary is $evalock. To use it for the tour in the README, put it on PATH:"
echo "  export PATH=\"$(dirname "$evalock"):\$PATH\""
echo "or install it for good: cargo install --locked --path $here"

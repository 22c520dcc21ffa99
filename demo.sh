#!/usr/bin/env bash
# Builds evalock and runs its main job on the bundled demo project, in a scratch git
# repository so this checkout is never modified.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cargo build --release --locked --manifest-path "$here/Cargo.toml"
evalock="$here/target/release/evalock"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp -R "$here/fixtures/demo/." "$scratch/"
cd "$scratch"
git init -q -b main
git -c user.email=demo@example.com -c user.name=demo add -A
git -c user.email=demo@example.com -c user.name=demo commit -q -m "demo project"

echo "== evalock check (the demo as committed)"
"$evalock" check

echo
echo "== a shipped case edited in place, then checked again"
sed -i 's/I want my money back\./I want my money back now./' evals/support.jsonl
set +e
"$evalock" check
status=$?
set -e
echo "(exit code $status: refused)"
git checkout -q -- evals/support.jsonl

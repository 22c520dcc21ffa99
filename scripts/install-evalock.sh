#!/usr/bin/env bash
# Installs evalock into "$INSTALL_ROOT/bin" for the GitHub Action.
#
# The prebuilt binary of a release is used when there is one: the release of
# `evalock-version` when it is set, else of the tag the action itself is used at
# (`uses: evalock/evalock@v0.3.0`). Its archive is verified against the release's
# SHA256SUMS; a checksum that does not match refuses the install. Without such a
# release (no tag, no binary for this runner, nothing published), evalock is built with
# cargo: from crates.io for `evalock-version`, else from the action's own source.
#
# Environment: INSTALL_ROOT, RUNNER_OS_NAME, RUNNER_ARCH_NAME, EVALOCK_VERSION (may be
# empty), EVALOCK_SOURCE (the source to build, default GITHUB_ACTION_PATH), and the runner's GITHUB_ACTION_PATH, GITHUB_ACTION_REF,
# GITHUB_ACTION_REPOSITORY and GITHUB_SERVER_URL.
set -euo pipefail

root="${INSTALL_ROOT:?INSTALL_ROOT is not set}"
version="${EVALOCK_VERSION:-}"
ref="${GITHUB_ACTION_REF:-}"
repository="${GITHUB_ACTION_REPOSITORY:-}"
server="${GITHUB_SERVER_URL:-https://github.com}"

# The Rust target each runner's release archive is built for.
case "${RUNNER_OS_NAME:-}/${RUNNER_ARCH_NAME:-}" in
  Linux/X64) target=x86_64-unknown-linux-gnu ;;
  Linux/ARM64) target=aarch64-unknown-linux-gnu ;;
  macOS/X64) target=x86_64-apple-darwin ;;
  macOS/ARM64) target=aarch64-apple-darwin ;;
  Windows/X64) target=x86_64-pc-windows-msvc ;;
  *) target="" ;;
esac

tag=""
if [ -n "$version" ]; then
  tag="v${version#v}"
elif [[ "$ref" =~ ^v[0-9]+(\.[0-9]+)*([-+][0-9A-Za-z.-]+)?$ ]]; then
  tag="$ref"
fi

build_with_cargo() {
  echo "$1: building evalock with cargo"
  if [ -n "$version" ]; then
    cargo install --locked evalock --version "${version#v}" --root "$root"
  else
    cargo install --locked --path "${EVALOCK_SOURCE:-${GITHUB_ACTION_PATH:?}}" --root "$root"
  fi
}

if [ -z "$tag" ] || [ -z "$target" ] || [ -z "$repository" ]; then
  build_with_cargo "no release to download (action ref '${ref:-none}', runner ${RUNNER_OS_NAME:-?}/${RUNNER_ARCH_NAME:-?})"
  exit 0
fi

archive="evalock-$target.tar.gz"
base="$server/$repository/releases/download/$tag"
download="$(mktemp -d)"
trap 'rm -rf "$download"' EXIT
fetch() { curl --fail --silent --show-error --location --retry 3 --output "$download/$1" "$base/$1"; }
if ! fetch SHA256SUMS || ! fetch "$archive"; then
  build_with_cargo "no prebuilt $archive in release $tag of $repository"
  exit 0
fi

expected="$(awk -v name="$archive" '$2 == name || $2 == "*" name { print $1; exit }' "$download/SHA256SUMS")"
if command -v sha256sum > /dev/null; then
  actual="$(sha256sum "$download/$archive" | cut -d ' ' -f 1)"
else
  actual="$(shasum -a 256 "$download/$archive" | cut -d ' ' -f 1)"
fi
if [ -z "$expected" ] || [ "$expected" != "$actual" ]; then
  echo "::error title=evalock::$archive of release $tag does not match its SHA-256 in SHA256SUMS (published ${expected:-nothing}, downloaded $actual): refusing to install it"
  exit 1
fi

mkdir -p "$root/bin"
tar -xzf "$download/$archive" -C "$download"
binary=evalock
if [ -f "$download/evalock.exe" ]; then binary=evalock.exe; fi
install -m 0755 "$download/$binary" "$root/bin/$binary"
echo "installed evalock $tag ($target), SHA-256 $actual"

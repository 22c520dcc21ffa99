#!/usr/bin/env bash
set -euo pipefail
since="${1:?usage: collect.sh <tag>}"
mkdir -p out
git log --oneline "${since}..HEAD" > out/commits.txt

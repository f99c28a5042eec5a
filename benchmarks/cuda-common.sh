#===- benchmarks/cuda-common.sh - What the cuda benchmarks share ----------===#
#
# Sourced by benchmarks/cuda-estimate.sh and benchmarks/cuda-scaling.sh,
# after they set BUILD: the tools they run, and text to train on.
#
#===----------------------------------------------------------------------===#

# MIXC and MIXRUN, checked; $1 names the calling script in the message.
cuda_bench_tools() {
  MIXC=$BUILD/bin/mixc
  MIXRUN=$BUILD/bin/mix-run
  for tool in "$MIXC" "$MIXRUN"; do
    if [ ! -x "$tool" ]; then
      echo "$1: no $tool (build it: ninja -C $BUILD mixc mix-run)" >&2
      exit 1
    fi
  done
}

# Text to train on in directory $1 (train.txt, val.txt): the counts do
# not depend on it (what a count-only step copies back is zeros), but the
# trainer needs batches of B (S + 1) tokens. The byte tokenizer reads any
# text.
cuda_bench_data() {
  if [ -s "$1/train.txt" ]; then
    return
  fi
  mkdir -p "$1"
  python3 - "$1" <<'PY'
import random, sys
r = random.Random(0)
words = "the of and to a in that is was he for it with as his on be at by".split()
for name, size in (("train.txt", 1 << 20), ("val.txt", 1 << 18)):
    text, n = [], 0
    while n < size:
        w = r.choice(words)
        text.append(w)
        n += len(w) + 1
    open(f"{sys.argv[1]}/{name}", "w").write(" ".join(text) + "\n")
PY
}

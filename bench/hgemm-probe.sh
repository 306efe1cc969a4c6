#!/usr/bin/env bash
# Builds the named builds of bench/hgemm-probe.cu (each name carries its settings: hgemm_BM128_BN256_S4_G8_P1.cubin)
# and, with --run, smoke-tests them at 2048³ (a hung build cannot stall the timed run: each smoke run has a
# timeout, and only builds that pass go on) and times them against torch.mm and Triton (bench/hgemm-probe.py).
#
#   bash bench/hgemm-probe.sh DIR NAME...            build into DIR (nvcc -gencode=arch=compute_90a,code=sm_90a)
#   bash bench/hgemm-probe.sh --run DIR OUT [SHAPES] smoke, then time every DIR/*.cubin; reports under OUT
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = "--run" ]; then
  dir=$2 out=$3 shapes=${4:-4096x4096x4096,8192x8192x8192,4096x4096x1024,2048x2048x2048}
  mkdir -p "$dir/passed"
  # The smoke runs go in parallel (each its own process and CUDA context, killed if it hangs).
  for c in "$dir"/*.cubin; do
    (
      one=$(mktemp -d)
      cp "$c" "$one/"
      [ -f "${c%.cubin}.json" ] && cp "${c%.cubin}.json" "$one/"  # a language rung's description
      if timeout 90 python3 "$here/hgemm-probe.py" --cubins "$one" --out "$one/r.json" --shapes 2048x2048x2048 --rounds 1 --no-triton >"$one/log" 2>&1 &&
        grep -q "pass  $(basename "$c")" "$one/log"; then
        cp "$c" "$dir/passed/"
        [ -f "${c%.cubin}.json" ] && cp "${c%.cubin}.json" "$dir/passed/"
        echo "smoke pass: $(basename "$c")"
      else
        echo "smoke FAIL: $(basename "$c")"
        grep "$(basename "$c")" "$one/log"
        tail -3 "$one/log"
      fi
    ) &
  done
  wait
  exec python3 "$here/hgemm-probe.py" --cubins "$dir/passed" --out "$out" --shapes "$shapes"
fi
dir=$1
shift
mkdir -p "$dir"
for name in "$@"; do
  flags=""
  for part in $(basename "$name" .cubin | tr _ ' '); do
    key=${part%%[0-9]*} value=${part#"$key"}
    case $key in
      BM | BN) flags="$flags -D$key=$value" ;;
      S) flags="$flags -DSTAGES=$value" ;;
      G) flags="$flags -DGROUPM=$value" ;;
      BT) flags="$flags -DBT=$value" ;;
      SW) flags="$flags -DSWAPLS=$value" ;;
      F) flags="$flags -DF16=$value" ;;
      CL) flags="$flags -DCL=$value" ;;
      E) flags="$flags -DEPI=$value" ;;
      PR) flags="$flags -DPREG=$value" ;;
      CR) flags="$flags -DCREG=$value" ;;
      *) ;;  # hgemm, P (a launch choice)
    esac
  done
  nvcc -gencode=arch=compute_90a,code=sm_90a -cubin -O3 $flags "$here/hgemm-probe.cu" -o "$dir/$(basename "$name" .cubin).cubin" || exit 1
done

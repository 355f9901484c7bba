#!/usr/bin/env bash
# SASS of bf16/f16 softmax CHUNKS=5 with and without griddepcontrol.wait; GEMMs with the trigger at entry vs at exit.
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for f in ptx/*.ptx; do ptxas -arch=sm_90a $f -o ${f%.ptx}.cubin && cuobjdump -sass ${f%.ptx}.cubin > $OUT/$(basename ${f%.ptx}).sass; done
ls -la $OUT
for round in 1 2; do for pdl in default wait_only 0; do
  echo "== GEMM PDL $pdl round $round"
  if [ $pdl = default ]; then ./tilefuse-bench matmul --dtype bf16 --reps 30 --shape 1x4096x4096,128x4096x4096,16x14336x4096,4096x4096x4096 | grep -E "^matmul "
  else TILEFUSE_PDL=$pdl ./tilefuse-bench matmul --dtype bf16 --reps 30 --shape 1x4096x4096,128x4096x4096,16x14336x4096,4096x4096x4096 | grep -E "^matmul "; fi
  if [ $pdl = default ]; then ./tilefuse-bench cross_entropy,rmsnorm_bwd --dtype bf16 --reps 20 --shape 8192x32000 | grep -E "^(cross|rms)"
  else TILEFUSE_PDL=$pdl ./tilefuse-bench cross_entropy,rmsnorm_bwd --dtype bf16 --reps 20 --shape 8192x32000 | grep -E "^(cross|rms)"; fi
done; done

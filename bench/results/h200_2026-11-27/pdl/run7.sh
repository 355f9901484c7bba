#!/usr/bin/env bash
# GPU suite on the predicated-wait PDL build; SASS of the predicated and plain wait.
cd "$(dirname "$0")"; D=$PWD
[ -d b ] || { mkdir b && python3 -c "import tarfile; tarfile.open('pk.tar.xz').extractall('b')"; }
export LD_LIBRARY_PATH=$D/b
nvidia-smi --query-gpu=name --format=csv,noheader
for f in pred unpred; do ptxas -arch=sm_90a $f.ptx -o $f.cubin && cuobjdump -sass $f.cubin | grep -nE 'ACQBULK|LDG|STG|S2R|S2UR|EXIT|BRA|PREEXIT' | head -20 | sed "s/^/$f: /"; done
cd b
for t in test_*gpu*; do s=$(date +%s); r=$(timeout 300 ./$t 2>&1 | tail -3 | grep -E 'test cases|Status' | tr '\n' ' '); echo "$t: $r ($(( $(date +%s) - s )) s)"; done

#!/usr/bin/env bash
# the empty-run test first (TILEFUSE_READABLE=first), and with the vector loads' registers defined (first_fill): GPU test + SASS of the failing kernels
cd "$(dirname "$0")"; export LD_LIBRARY_PATH=$PWD
export TILEFUSE_NO_CACHE=1
for v in first first_fill 1; do
  TILEFUSE_READABLE=$v ./test_gpu_aligned_rows > $OUT/1_$v.txt 2>&1; echo "$v aligned_rows rc=$? $(grep -E 'assertions' $OUT/1_$v.txt)"
done
mkdir -p sass
for v in first first_fill; do
  TILEFUSE_READABLE=$v TILEFUSE_DUMP_PTX=aligned_scale_rows ./test_gpu_aligned_rows -tc='*every width remainder*' > /dev/null 2> ptx_$v.txt
  awk -v d=sass -v v=$v '/^\/\/ ----- PTX/{n++; f=sprintf("%s/%s_%02d.ptx",d,v,n); next} {if(f) print > f}' ptx_$v.txt
done
ls sass | head -3; ls sass | wc -l
for p in sass/*.ptx; do
  ptxas -arch=sm_90a -O3 $p -o ${p%.ptx}.cubin 2>/dev/null || ptxas -arch=sm_90 $p -o ${p%.ptx}.cubin
  cuobjdump -sass ${p%.ptx}.cubin > ${p%.ptx}.sass
done
tar czf $OUT/sass.tgz sass
for v in first_fill 1; do
  for t in test_gpu_softmax_backward test_gpu_cross_entropy test_gpu_row_chunks test_gpu_gallery; do
    TILEFUSE_READABLE=$v ./$t > $OUT/1_${v}_$t.txt 2>&1; echo "$v $t rc=$? $(grep -E 'test cases' $OUT/1_${v}_$t.txt)"
  done
done
for v in 1 first_fill 1 first_fill; do TILEFUSE_READABLE=$v ./tilefuse-bench softmax,cross_entropy,softmax_bwd --shape 2048x65537,2048x128257,8192x8197,16384x4099 2>&1 | grep -E "^(softmax|cross)" | cut -c1-100 | sed "s/^/$v /"; done

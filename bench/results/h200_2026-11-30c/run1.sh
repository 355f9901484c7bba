#!/usr/bin/env bash
# Run 1: what the previous stop owed (memcheck of test_gpu_row_chunks with its tail case),
# and where LayerNorm's time goes on wide 16-bit rows against RMSNorm and softmax (ncu:
# DRAM, L2 and L1 traffic), with the three kernels benched at the same shapes.
b=${1:?bundle}; out=${2:?out}
cd $b && export LD_LIBRARY_PATH=$PWD && mkdir -p /tmp/c1 && export TILEFUSE_CACHE_DIR=/tmp/c1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t=$SECONDS; timeout 150 compute-sanitizer --tool memcheck ./test_gpu_row_chunks 2>&1 | grep -E "ERROR SUMMARY|test cases|assertions" | head; echo "memcheck took $((SECONDS-t)) s"
echo "#### bench"
timeout 120 ./tilefuse-bench softmax,rmsnorm,layernorm --dtype bf16 --shape 2048x65536,512x262144,16384x4096 --reps 10 2>&1 | grep -v "^\s*$" | cut -c1-170
for k in layernorm rmsnorm softmax; do for s in 2048x65536 512x262144; do
  echo "== ncu $k $s"
  timeout 90 ncu --clock-control none -k regex:^${k}_ --launch-skip 3 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --metrics lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,sm__inst_executed.sum ./tilefuse-bench $k --dtype bf16 --shape $s --reps 4 2>&1 | grep -E "Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Memory Throughput|Mem Busy|Max Bandwidth|L1/TEX Hit|L2 Hit|Registers Per|Achieved Occupancy|Theoretical Occ|Grid Size|Cluster|lts__|dram__|l1tex__|sm__inst" | head -30
done; done

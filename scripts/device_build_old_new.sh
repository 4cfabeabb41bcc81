#!/usr/bin/env bash
# Sourced by the scripts that compare an old and a new build on the GPU machine
# (device_compare.sh, device_collisions_check.sh): builds this tree (the cuda preset: nbody
# and the GPU test binaries) and the older source copy in $old_src (nbody only), logs in
# $out, and sets $new and $old to the two binaries. Exits on a build failure.
t0=$(date +%s)
cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build/cuda -j16 --target nbody nbody_gpu_tests nbody_backend_tests >"$out/build.log" 2>&1 || { grep -E "error" -A3 "$out/build.log" | head -60; exit 1; }
cmake -S "$old_src" -B build/old -G Ninja -DCMAKE_BUILD_TYPE=Release -DNBODY_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DNBODY_BUILD_TESTS=OFF -DNBODY_BUILD_BENCHMARKS=OFF >"$out/configure_old.log" 2>&1 || { tail -30 "$out/configure_old.log"; exit 1; }
cmake --build build/old -j16 --target nbody >"$out/build_old.log" 2>&1 || { grep -E "error" -A3 "$out/build_old.log" | head -40; exit 1; }
echo "build (new and old): $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit --format=csv,noheader
new=build/cuda/src/nbody
old=build/old/src/nbody

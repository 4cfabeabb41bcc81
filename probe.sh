#!/bin/bash
cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES=90 > /dev/null 2>&1
t0=$(date +%s)
cmake --build build/cuda -j16 2>&1 | grep -E "error|FAILED" | head -20
echo "build $(( $(date +%s) - t0 )) s"
cd build/cuda
for n in 100000 1000000 10000000; do ./src/nbody bench test-particles --device gpu -n $n 2>&1 | grep "^   gpu"; done
./src/nbody run --model giants -n 1000005 --device gpu --steps 100 --dt 0.01 --json 2>/dev/null | python3 -c "import json,sys; j=json.load(sys.stdin); print('giants run', j['test_particles'], j['timings'])"
./src/nbody run --model plummer -n 1000 --device gpu --timestep hierarchical --steps 1 2>&1 | tail -1
./src/nbody run --model giants -n 100005 --radius 0.01 --collisions merge --device gpu --steps 200 --dt 0.01 2>&1 | grep -E "collisions:|test particles"
t1=$(date +%s)
ctest -L "gpu|cuda" -j6 --timeout 300 2>&1 | tail -6
echo "ctest $(( $(date +%s) - t1 )) s"

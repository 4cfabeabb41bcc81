#pragma once
// NBODY_HD marks physics that is written once and compiled for both the CPU and,
// when CUDA is on, the GPU. Plain C++ compilers see an empty macro.
#if defined(__CUDACC__)
#define NBODY_HD __host__ __device__ __forceinline__
#else
#define NBODY_HD inline
#endif

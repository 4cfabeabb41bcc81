# The default of CMAKE_CUDA_ARCHITECTURES (which GPUs the kernels are compiled for), set
# before enable_language(CUDA) when the user gave none (-DCMAKE_CUDA_ARCHITECTURES=... or a
# preset wins; docs/install.md):
#   - the GPUs of the build machine, as nvidia-smi reports them (e.g. 90 for an H100): one
#     architecture, the quickest build, and the code that machine runs;
#   - else (no GPU or no driver, e.g. a CI runner) every current GPU family that nvcc 13
#     supports (`nvcc --list-gpu-arch`), each as machine code: 75 Turing, 80 A100,
#     86 RTX 30xx/A40 (also 87, 88), 89 RTX 40xx/L4/L40, 90 H100/H200, 100 B200/GB200
#     (also 103), 120 RTX 50xx (also 121, DGX Spark); plus PTX of 120, which the driver
#     compiles for GPUs newer than these. A portable binary, but each .cu file is compiled
#     7 times: a build for one GPU should name it.
# CMake's own `native` would also find the GPU, but fails to configure where there is none.
set(NBODY_CUDA_ARCHITECTURES_PORTABLE "75-real;80-real;86-real;89-real;90-real;100-real;120")

function(nbody_default_cuda_architectures out_var)
  set(archs "")
  find_program(NBODY_NVIDIA_SMI nvidia-smi)
  if(NBODY_NVIDIA_SMI)
    execute_process(COMMAND ${NBODY_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE caps RESULT_VARIABLE rc ERROR_QUIET TIMEOUT 20)
    if(rc EQUAL 0)
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" caps "${caps}")
      foreach(cap IN LISTS caps)
        string(REPLACE "." "" arch "${cap}")
        list(APPEND archs ${arch})
      endforeach()
      list(REMOVE_DUPLICATES archs)
    endif()
  endif()
  if(archs)
    message(STATUS "nbody: CUDA architectures ${archs} (the GPUs of this machine; -DCMAKE_CUDA_ARCHITECTURES=... for others)")
  else()
    set(archs ${NBODY_CUDA_ARCHITECTURES_PORTABLE})
    message(STATUS "nbody: CUDA architectures ${archs} (no GPU found: every current family; -DCMAKE_CUDA_ARCHITECTURES=90 builds for one)")
  endif()
  set(${out_var} "${archs}" PARENT_SCOPE)
endfunction()

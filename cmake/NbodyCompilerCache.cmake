# ccache (Debian's ccache, installed by scripts/setup.sh) in front of every compiler when it
# is installed: the presets, the Python module's build (pip install .) and a re-run share one
# cache outside the build folders (ccache's own, ~/.cache/ccache; CCACHE_DIR moves it), so an
# object compiled once with the same flags is not compiled again, e.g. the host C++ of the
# `cuda` preset after the `release` preset, or CI after a developer's build of the same commit
# in another clone (CCACHE_BASEDIR: paths below the source folder are hashed relative to it;
# CCACHE_NOHASHDIR: the build folder is not hashed either, so the debug preset's objects, built
# with -g, serve another clone too, their debug information naming the first clone's folder).
# -DNBODY_CCACHE=OFF, or a CMAKE_<LANG>_COMPILER_LAUNCHER of one's own, turns it off.
option(NBODY_CCACHE "Compile through ccache when it is installed" ON)
if(NBODY_CCACHE)
  find_program(NBODY_CCACHE_PROGRAM ccache)
  if(NBODY_CCACHE_PROGRAM)
    set(_nbody_ccache ${CMAKE_COMMAND} -E env "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" CCACHE_NOHASHDIR=1
        ${NBODY_CCACHE_PROGRAM})
    foreach(lang C CXX CUDA)
      if(NOT CMAKE_${lang}_COMPILER_LAUNCHER)
        set(CMAKE_${lang}_COMPILER_LAUNCHER ${_nbody_ccache})
      endif()
    endforeach()
    message(STATUS "nbody: ccache ${NBODY_CCACHE_PROGRAM}")
  else()
    message(STATUS "nbody: ccache OFF (not installed: apt install ccache)")
  endif()
endif()

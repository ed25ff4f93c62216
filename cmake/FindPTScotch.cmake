# FindPTScotch -> PTScotch::PTScotch: PT-Scotch with a 64-bit SCOTCH_Num (Debian libptscotch-dev,
# its scotch-int64 variant: headers /usr/include/scotch-int64, libraries
# /usr/lib/<multiarch>/scotch-int64). Linked statically: the 32-bit libraries carry the same
# sonames in the default library path, so a shared link could load the wrong width at run time.
# Not the scotch-long variant (also 64-bit on x86-64 Linux): its libptscotch 7.0.3 fails inside
# SCOTCH_dgraphPart (MPI_ERR_TRUNCATE in MPI_Allgatherv with 2 processes, a hang with 3) on a
# 16-vertex ring where scotch-int64 and scotch-int32 succeed (docs/scale.md).
# Only the scotch-int64 folders are searched (never the 32-bit ones beside them), under every
# CMAKE_PREFIX_PATH entry, the variable's and the environment's (scripts/gpu-check's private
# prefix), and then /usr. The multiarch folder is the compiler's, else x86_64-linux-gnu (a
# compiler outside the system's, as /opt/gcc on the GPU machine, may report none).
set(_ptscotch_includes)
set(_ptscotch_libdirs)
set(_ptscotch_arch ${CMAKE_LIBRARY_ARCHITECTURE})
if(NOT _ptscotch_arch)
    set(_ptscotch_arch x86_64-linux-gnu)
endif()
set(_ptscotch_prefixes ${CMAKE_PREFIX_PATH} $ENV{CMAKE_PREFIX_PATH})
string(REPLACE ":" ";" _ptscotch_prefixes "${_ptscotch_prefixes}")
foreach(_prefix IN LISTS _ptscotch_prefixes ITEMS /usr)
    list(APPEND _ptscotch_includes ${_prefix}/include/scotch-int64)
    list(APPEND _ptscotch_libdirs ${_prefix}/lib/${_ptscotch_arch}/scotch-int64)
endforeach()
find_path(PTSCOTCH_INCLUDE_DIR ptscotch.h PATHS ${_ptscotch_includes} NO_DEFAULT_PATH)
find_library(PTSCOTCH_LIBRARY NAMES libptscotch.a PATHS ${_ptscotch_libdirs} NO_DEFAULT_PATH)
find_library(PTSCOTCH_SCOTCH_LIBRARY NAMES libscotch.a PATHS ${_ptscotch_libdirs} NO_DEFAULT_PATH)
# No error library (libptscotcherr): partition/ptscotch_partitioner.cpp provides SCOTCH_errorPrint
# and its kin, ending the job on an error (PT-Scotch does not always return after one).
# Compression libraries of Scotch's graph I/O; the runtime names serve where no -dev is installed.
find_library(PTSCOTCH_BZ2_LIBRARY NAMES bz2 libbz2.so.1.0)
find_library(PTSCOTCH_LZMA_LIBRARY NAMES lzma liblzma.so.5)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PTScotch REQUIRED_VARS PTSCOTCH_LIBRARY PTSCOTCH_SCOTCH_LIBRARY
                                  PTSCOTCH_INCLUDE_DIR PTSCOTCH_BZ2_LIBRARY PTSCOTCH_LZMA_LIBRARY)
if(PTScotch_FOUND AND NOT TARGET PTScotch::PTScotch)
    find_package(MPI REQUIRED COMPONENTS C)
    find_package(ZLIB REQUIRED)
    find_package(Threads REQUIRED)
    add_library(PTScotch::PTScotch INTERFACE IMPORTED)
    set_target_properties(PTScotch::PTScotch PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${PTSCOTCH_INCLUDE_DIR}"
        INTERFACE_LINK_LIBRARIES "${PTSCOTCH_LIBRARY};${PTSCOTCH_SCOTCH_LIBRARY};MPI::MPI_C;ZLIB::ZLIB;${PTSCOTCH_BZ2_LIBRARY};${PTSCOTCH_LZMA_LIBRARY};Threads::Threads;m")
endif()
unset(_ptscotch_arch)
unset(_ptscotch_prefixes)
unset(_ptscotch_includes)
unset(_ptscotch_libdirs)

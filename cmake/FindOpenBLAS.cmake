# FindOpenBLAS -> OpenBLAS::OpenBLAS (CBLAS header + libopenblas). Debian puts cblas.h under
# an alternatives-managed multiarch path; prefer the openblas-pthread variant explicitly.
find_path(OpenBLAS_INCLUDE_DIR cblas.h
          PATH_SUFFIXES openblas-pthread x86_64-linux-gnu/openblas-pthread openblas)
find_library(OpenBLAS_LIBRARY NAMES openblas PATH_SUFFIXES openblas-pthread)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenBLAS REQUIRED_VARS OpenBLAS_LIBRARY OpenBLAS_INCLUDE_DIR)
if(OpenBLAS_FOUND AND NOT TARGET OpenBLAS::OpenBLAS)
    add_library(OpenBLAS::OpenBLAS UNKNOWN IMPORTED)
    set_target_properties(OpenBLAS::OpenBLAS PROPERTIES IMPORTED_LOCATION "${OpenBLAS_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${OpenBLAS_INCLUDE_DIR}")
endif()

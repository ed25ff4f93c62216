# FindLibZip -> LibZip::LibZip. Debian 12's libzip-dev ships a CMake config whose imported
# tool targets (zipcmp, zipmerge, ziptool) point at binaries of other packages, so that config
# fails to load unless they are installed; only the library and zip.h/zipconf.h are needed here.
find_path(LibZip_INCLUDE_DIR zip.h)
find_library(LibZip_LIBRARY zip)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LibZip REQUIRED_VARS LibZip_LIBRARY LibZip_INCLUDE_DIR)
if(LibZip_FOUND AND NOT TARGET LibZip::LibZip)
    add_library(LibZip::LibZip UNKNOWN IMPORTED)
    set_target_properties(LibZip::LibZip PROPERTIES IMPORTED_LOCATION "${LibZip_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${LibZip_INCLUDE_DIR}")
endif()

# The installed package: `find_package(Strata)` for projects outside this tree. The targets were
# put into the export set StrataTargets by strata_install() (cmake/strata_helpers.cmake); this
# installs that set as Strata::<target>, the config and version files, and the find modules the
# config needs to find the dependencies again (docs/library.md).
include(CMakePackageConfigHelpers)
install(EXPORT StrataTargets NAMESPACE Strata:: DESTINATION ${STRATA_INSTALL_CMAKEDIR}
        FILE StrataTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/StrataConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/StrataConfig.cmake
                              INSTALL_DESTINATION ${STRATA_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the interface.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/StrataConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/StrataConfig.cmake
              ${PROJECT_BINARY_DIR}/StrataConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindMETIS.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindPTScotch.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindOpenBLAS.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindNCCL.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindLibZip.cmake
        DESTINATION ${STRATA_INSTALL_CMAKEDIR})

# Warnings target, the library and install helpers, and test registration, shared by every folder.
include(GNUInstallDirs)
# Installed headers keep the repository's include paths: <prefix>/include/strata/src/nn/op.hpp
# is `#include "src/nn/op.hpp"` with <prefix>/include/strata on the include path.
set(STRATA_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/strata)
set(STRATA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)

# Build-only: linked as $<BUILD_INTERFACE:strata_warnings>, so never part of the installed targets.
add_library(strata_warnings INTERFACE)
target_compile_options(strata_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor
                              -Wold-style-cast>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)

# strata_library(<name> SOURCES <files> [PUBLIC <targets>] [PRIVATE <targets>]
#                [PRIVATE_HEADERS <file or folder names>])
# One library per folder; the include root is the repository root. Installed with the folder's
# headers except PRIVATE_HEADERS (strata_install).
function(strata_library name)
    cmake_parse_arguments(arg "" "" "SOURCES;PUBLIC;PRIVATE;PRIVATE_HEADERS" ${ARGN})
    add_library(${name} STATIC ${arg_SOURCES})
    target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                              $<INSTALL_INTERFACE:${STRATA_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${name} PUBLIC ${arg_PUBLIC}
                          PRIVATE ${arg_PRIVATE} $<BUILD_INTERFACE:strata_warnings>)
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    strata_install(${name} EXCLUDE ${arg_PRIVATE_HEADERS})
endfunction()

# strata_install(<target> [EXCLUDE <file or folder name>...]): the target into the export set
# StrataTargets (as Strata::<target>, cmake/strata_install.cmake) and the headers of the calling
# folder and its sub-folders under the same relative path, except the names in EXCLUDE
# (private headers: those that include a third-party C API kept PRIVATE to the target).
function(strata_install name)
    cmake_parse_arguments(arg "" "" "EXCLUDE" ${ARGN})
    install(TARGETS ${name} EXPORT StrataTargets
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
            RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
    set(excluded)
    foreach(item IN LISTS arg_EXCLUDE)
        list(APPEND excluded PATTERN ${item} EXCLUDE)
    endforeach()
    install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/ DESTINATION ${STRATA_INSTALL_INCLUDEDIR}/${folder}
            FILES_MATCHING PATTERN "*.hpp" ${excluded})
endfunction()

set(STRATA_MPI_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMP_NUM_THREADS=1")

# strata_add_mpi_test(<name> SOURCES <files> LIBS <targets> RANKS <n>... [TIMEOUT s])
# Every rank runs every Catch2 test; the exit code is the worst over all ranks.
function(strata_add_mpi_test name)
    cmake_parse_arguments(arg "" "TIMEOUT" "SOURCES;LIBS;RANKS" ${ARGN})
    if(NOT arg_TIMEOUT)
        set(arg_TIMEOUT 180)
    endif()
    add_executable(${name} ${arg_SOURCES})
    target_link_libraries(${name} PRIVATE ${arg_LIBS} strata_test_mpi_main strata_warnings)
    foreach(np IN LISTS arg_RANKS)
        add_test(NAME ${name}.np${np}
                 COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                         ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
        # A private TMPDIR per test: concurrent mpiruns then never share Open MPI's session
        # directory (its creation races under ctest -j).
        set(tmp ${CMAKE_BINARY_DIR}/mpi-tmp/${name}.np${np})
        file(MAKE_DIRECTORY ${tmp})
        set_tests_properties(${name}.np${np} PROPERTIES
            LABELS mpi PROCESSORS ${np} TIMEOUT ${arg_TIMEOUT}
            ENVIRONMENT "${STRATA_MPI_ENV};TMPDIR=${tmp}")
    endforeach()
endfunction()

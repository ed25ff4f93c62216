# Warnings target and test-registration helpers shared by every folder.
add_library(strata_warnings INTERFACE)
target_compile_options(strata_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor
                              -Wold-style-cast>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)

# strata_library(<name> SOURCES <files> [PUBLIC <targets>] [PRIVATE <targets>])
# One library per folder; the include root is the repository root.
function(strata_library name)
    cmake_parse_arguments(arg "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
    add_library(${name} STATIC ${arg_SOURCES})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC ${arg_PUBLIC} PRIVATE ${arg_PRIVATE} strata_warnings)
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
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

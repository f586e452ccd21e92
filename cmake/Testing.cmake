# Unit-test helpers. Each module keeps its Catch2 tests next to its sources (foo_test.cc) and
# registers them with rdmaproxy_unit_tests(); every TEST_CASE becomes a CTest test named
# "unit.<module>.<case>" with the label "unit".
include(Catch)

add_library(rxp_catch_main STATIC ${CMAKE_CURRENT_LIST_DIR}/catch_main.cc)
target_link_libraries(rxp_catch_main PUBLIC Catch2::Catch2)

function(rdmaproxy_unit_tests module)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  set(target rxp_${module}_tests)
  add_executable(${target} ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE rxp_catch_main ${ARG_LIBS})
  rdmaproxy_set_warnings(${target})
  # A TEST_CASE name with ';' becomes two CTest tests (a CMake list) whose filters match
  # nothing; "-w NoTests" makes such a run fail instead of passing without running anything.
  catch_discover_tests(${target}
    TEST_PREFIX "unit.${module}."
    EXTRA_ARGS -w NoTests
    PROPERTIES LABELS unit
    # Tests read fixtures relative to the source tree.
    WORKING_DIRECTORY ${RDMAPROXY_ROOT})
endfunction()

# rdmaproxy_set_warnings(target): the project's warning set, errors when RDMAPROXY_WERROR is on.
function(rdmaproxy_set_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>
    -Wcast-align -Wunused -Wconversion -Wsign-conversion
    -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough
    # Schema tables use designated initializers and rely on member defaults.
    -Wno-missing-field-initializers)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # The kernel UAPI structs end in zero-length arrays (driver_data[0]).
    target_compile_options(${target} PRIVATE -Wno-zero-length-array -Wno-gnu-zero-variadic-macro-arguments)
  endif()
  if(RDMAPROXY_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# ASan + UBSan for the whole build when RDMAPROXY_SANITIZE is on. CI builds a second tree
# with it and runs the unit tests there. UBSan is made fatal so a finding fails the test.
if(RDMAPROXY_SANITIZE)
  set(_rdmaproxy_san -fsanitize=address,undefined -fno-sanitize-recover=all
                     -fno-omit-frame-pointer)
  add_compile_options(${_rdmaproxy_san})
  add_link_options(${_rdmaproxy_san})
endif()

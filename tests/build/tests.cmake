# tests/build - build-level checks (label build): symbol hygiene of libbpfrt.a/.so, and an
# install into a temporary prefix with pkg-config and a program built against it.  They
# check the plain build only: sanitizer builds add their own symbols and runtime needs.
if(NOT BPFRT_SANITIZE AND NOT BPFRT_FUZZ)
  set(dir ${CMAKE_CURRENT_SOURCE_DIR}/build)
  add_test(NAME build.symbols_static
    COMMAND sh ${dir}/check_symbols.sh static $<TARGET_FILE:bpfrt_static>)
  add_test(NAME build.symbols_shared
    COMMAND sh ${dir}/check_symbols.sh shared $<TARGET_FILE:bpfrt> ${CMAKE_SOURCE_DIR})
  add_test(NAME build.install
    COMMAND sh ${dir}/check_install.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(build.symbols_static build.symbols_shared build.install
    PROPERTIES LABELS build TIMEOUT 300)
endif()

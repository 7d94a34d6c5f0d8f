# tests/api/tests.cmake - test_opts.c once more, compiled with clang (api.opts_clang):
# compilers differ in which padding bytes they leave as the stack had them, and BPFRT_OPTS
# must give a struct the library accepts with either.
find_program(BPFRT_CLANG clang)
if(BPFRT_CLANG)
  set(opts_obj ${CMAKE_CURRENT_BINARY_DIR}/test_opts_clang.o)
  add_custom_command(OUTPUT ${opts_obj}
    COMMAND ${BPFRT_CLANG} -O2 -std=c11 -Wall -Wextra -Werror -I${CMAKE_SOURCE_DIR}/include
            -I${CMAKE_CURRENT_SOURCE_DIR} -MD -MF ${opts_obj}.d
            -c ${CMAKE_CURRENT_LIST_DIR}/test_opts.c -o ${opts_obj}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_opts.c
    DEPFILE ${opts_obj}.d
    COMMENT "Building test_opts.c with clang")
  add_executable(test_api_opts_clang ${opts_obj})
  set_target_properties(test_api_opts_clang PROPERTIES LINKER_LANGUAGE C)
  target_link_libraries(test_api_opts_clang PRIVATE bpfrt_static)
  add_test(NAME api.opts_clang COMMAND test_api_opts_clang)
  set_tests_properties(api.opts_clang PROPERTIES LABELS unit SKIP_RETURN_CODE 77
    WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
# api.unpriv_pin_oracle sets kernel.unprivileged_bpf_disabled to 0 for its run (tests/unpriv.h)
target_compile_definitions(test_api_unpriv_pin_oracle PRIVATE
  BPFRT_UNPRIV_LOCK="${BPFRT_UNPRIV_LOCK}")

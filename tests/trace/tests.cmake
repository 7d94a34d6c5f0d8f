# tests/trace - the tracing CLI (trace, trace-log) from a shell script.
add_test(NAME trace.cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/trace/cli_trace.sh
                                $<TARGET_FILE:bpfrt_cli>)
set_tests_properties(trace.cli PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)
# the dropmon sample as a user runs it (needs its object, built by samples/)
add_test(NAME trace.dropmon_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/trace/dropmon.sh
                                        ${CMAKE_BINARY_DIR}/samples/dropmon/dropmon)
set_tests_properties(trace.dropmon_cli PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)
# the user stacks trace.stack_oracle compares are walked by frame pointers: keep them in
# its frames so both sides' walks are the same, not garbage that differs per run
target_compile_options(test_trace_stack_oracle PRIVATE -fno-omit-frame-pointer)
# under a sanitizer prctl() and syscall() go through its interceptors, frames without frame
# pointers: each call's user walk reads different garbage (fresh-clone CI, session 12)
if(BPFRT_SANITIZE)
  target_compile_definitions(test_trace_stack_oracle PRIVATE BPFRT_TEST_SANITIZED=1)
endif()

# tests/trace - the tracing CLI (trace, trace-log) from a shell script.
add_test(NAME trace.cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/trace/cli_trace.sh
                                $<TARGET_FILE:bpfrt_cli>)
set_tests_properties(trace.cli PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)

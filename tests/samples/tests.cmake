# tests/samples - the samples' programs run as a user would run them (the C tests
# tests/samples/test_*.c check the same eBPF objects through the API).
add_test(NAME samples.sock_example_cli
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/samples/sock_example.sh
          $<TARGET_FILE:sample_sock_example>)
set_tests_properties(samples.sock_example_cli PROPERTIES LABELS unit SKIP_RETURN_CODE 77
  TIMEOUT 120)

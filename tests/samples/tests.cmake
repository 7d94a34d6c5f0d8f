# tests/samples - the samples' programs run as a user would run them (the C tests
# tests/samples/test_*.c check the same eBPF objects through the API).
add_test(NAME samples.sock_example_cli
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/samples/sock_example.sh
          $<TARGET_FILE:sample_sock_example>)
set_tests_properties(samples.sock_example_cli PROPERTIES LABELS unit SKIP_RETURN_CODE 77
  TIMEOUT 120)
add_test(NAME samples.tcpdump
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/samples/tcpdump.sh $<TARGET_FILE:sample_tcpdump>
          $<TARGET_FILE:attach_gen_pcap>)
set_tests_properties(samples.tcpdump PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME samples.ringbuf
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/samples/udp_events.sh $<TARGET_FILE:sample_ringbuf>)
set_tests_properties(samples.ringbuf PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 120)
add_test(NAME samples.perf_output
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/samples/udp_events.sh
          $<TARGET_FILE:sample_perf_output>)
set_tests_properties(samples.perf_output PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 120)

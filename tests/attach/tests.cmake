# tests/attach - the packet-filter CLI checked against tcpdump on generated captures
# (attach.cli_filter), built on a small generator (attach_gen_pcap, also used by
# tests/attach/bench_filter.sh for the packets-per-second comparison with libpcap).
add_executable(attach_gen_pcap ${CMAKE_CURRENT_SOURCE_DIR}/attach/gen_pcap.c)
target_include_directories(attach_gen_pcap PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(attach_gen_pcap PRIVATE bpfrt_static)
add_test(NAME attach.cli_filter
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/attach/cli_filter.sh $<TARGET_FILE:bpfrt_cli>
          $<TARGET_FILE:attach_gen_pcap>)
set_tests_properties(attach.cli_filter PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME attach.cli_ebpf
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/attach/cli_ebpf.sh $<TARGET_FILE:bpfrt_cli>
          $<TARGET_FILE:attach_gen_pcap> ${CMAKE_CURRENT_SOURCE_DIR}/attach/progs
          ${CMAKE_BINARY_DIR}/samples/sock_example/sock_example.bpf.o)
set_tests_properties(attach.cli_ebpf PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 600)

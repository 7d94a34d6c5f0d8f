# tests/maps - the "bpfrt map" CLI on pinned maps (maps.cli_map).
add_test(NAME maps.cli_map
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/maps/cli_map.sh $<TARGET_FILE:bpfrt_cli>
          ${CMAKE_BINARY_DIR}/progs)
set_tests_properties(maps.cli_map PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 120)

# `bpfrt map` lookup/dump/getnext/show (text and -j) against bpftool on the same maps, one
# side in the kernel, the other in bpfrt (tests/progs/map_values.bpf.c); root only.
add_test(NAME maps.fmt_vs_bpftool
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/maps/map_fmt_vs_bpftool.sh $<TARGET_FILE:bpfrt_cli>
          ${CMAKE_BINARY_DIR}/progs)
set_tests_properties(maps.fmt_vs_bpftool PROPERTIES LABELS oracle SKIP_RETURN_CODE 77
  TIMEOUT 120)
